"""The sidebar's chats: listed, grouped by date, searched, opened, exported and imported;
and a chat's own settings."""
