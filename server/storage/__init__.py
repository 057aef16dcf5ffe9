"""SQLite: the database's writer and readers, migrations, the store, rows, search,
branches. Imports no agent, turn, transfer or HTTP code."""
