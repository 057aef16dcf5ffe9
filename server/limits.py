"""Every size limit, deadline and timeout of the server, in one place.

`Limits` is what the server runs with (the command line sets some: server/arguments.py); its
parts group each room's own bounds (`limits.tools`, `limits.library`, ...). A module that is
handed no `Limits` reads its part's defaults from the class here (`ToolLimits.start_timeout`),
never a number of its own. Deadlines are in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, is_dataclass

# The embedded server's Limits.relay_pause (desktop/embedded.py; server/models/relay_duty.py).
EMBEDDED_RELAY_PAUSE_S = 0.004


@dataclass(frozen=True)
class Limits:
    """Every size limit and every deadline of the server, and the desktop's waits on it.

    Deadlines are in seconds. Those that bound a stop must keep this order (checked here,
    so a configuration that breaks it is refused with ValueError; pinned by
    tests/server/test_limits.py):

        stop_timeout < shutdown_runs_wait < graceful_shutdown < server_stop_wait
        settle_bound < settled_wait

    - `stop_timeout`: how long a settle waits for a run's real work (worker thread, upstream
      socket) to stop before it saves anyway; the model stays leased until the work ends.
      A cooperative worker stops within a token, so this is the normal worst case of a stop.
    - `settle_bound` (derived): the longest one settle can take: `stop_timeout`, then up to
      `final_write_attempts` final writes, each waiting up to `db_busy_timeout` for another
      program's write lock, with pauses in between.
    - `shutdown_runs_wait`: at shutdown the run manager waits this long (counted from the
      moment shutdown began) for every run to settle. Above `stop_timeout`, so a worker that
      ignores its stop is still saved on the normal path, by its own settle.
    - `graceful_shutdown`: uvicorn's backstop (counted from the same moment): responses
      still open then are cancelled. Above `shutdown_runs_wait`, so every run the manager
      waits for also gets to send its final chunk (what was saved) to its client.
    - `server_stop_wait`: how long the desktop joins the embedded server's thread. Above
      `graceful_shutdown`, so uvicorn's own backstop fires first and the thread ends by
      itself. A final write held up by another program's lock (up to `settle_bound`) may
      outlast it: the desktop then exits anyway and the next start marks that reply
      `interrupted`/`crash` with its last checkpoint. Nothing is deleted.
    - `settled_wait`: the bound of `GET .../messages/{id}?wait=settled`. Above
      `settle_bound`, so the long-poll returns a settled message whenever the settle ends
      at all.

    Outside that order, each for its own reason:

    - `close_settle_wait`: on close the window waits this long for the server to report no
      active turn, then stops the server. A UI bound, deliberately NOT above `stop_timeout`:
      a hang-up settles in milliseconds (the work stops at the next token or when its
      upstream socket closes), and a worker that ignores it is settled by the server stop
      that follows (its ending stays `client_hangup`: the first reason wins). Waiting longer
      would only delay the window's exit.
    - `server_start_wait`: how long the desktop waits for the embedded server to serve.
    - `header_timeout`, `body_timeout`: a client must send its request within these (a
      loopback client takes milliseconds); slower ones get 408 (server/http/protocol.py,
      server/http/jsonbody.py).
    - `send_timeout`: a client that reads nothing for this long while a response waits to
      be written (its socket's buffers full) is disconnected, and its reply takes the
      hang-up path (server/http/protocol.py). A slow reader is not dropped: only one that
      reads nothing at all.
    - `drain_grace`: a connection whose response is complete while its client still sends
      the request's body (a 408, a 413, a refused token) is closed after this long: time to
      read the answer, not to trickle the body for ever (server/http/protocol.py).
    - `upstream_connect_timeout`, `upstream_write_timeout`, `upstream_pool_timeout`,
      `upstream_read_timeout`: how long a run waits on an OpenAI-compatible upstream before
      it ends with an error. They never delay a stop: stopping a run closes its request at
      once. The read timeout is long (a long prefill is legitimately silent for minutes);
      a hang-up, not this timeout, is how a user stops a stalled reply.
    - `tool_call_timeout`: how long one tool call runs before the user is asked whether to
      keep waiting or stop it (never a silent cut; a stopped call's step ends as an error
      the model sees). A stop never waits for it.
    - `max_steps`: the most model calls in one turn; the last one may call no tool
      (`tool_choice: none`), so the model answers with what it has.
    - `relay_pause`: None (parley-server): an upstream's stream is relayed as fast as it
      comes. The desktop's embedded server sets it: input that piles up (an upstream
      faster than the relay) is handled in bursts with pauses this long between them, so
      the window's thread, which shares the process and its GIL, gets them and a core
      (server/models/relay_duty.py). An upstream at a model's rate is never paused.
    - `checkpoint_interval`: at most one checkpoint write per interval while a reply
      streams. It bounds what a crash loses (promise: 250 ms of delivered text,
      docs/reliability.md); 100 ms keeps a margin for the write itself and costs about
      one small transaction per interval (docs/benchmarks.md).
    - `save_retry_interval`: a reply whose write failed (a full disk) is kept in memory and
      written again this often, streaming or settled, until the database takes it; what was
      delivered meanwhile is on disk this long after space returns.
    """

    max_body_bytes: int = 1_000_000
    max_import_bytes: int = 256_000_000  # POST /api/import: a whole history
    max_content_chars: int = 200_000
    max_reply_tokens: int = 1_000_000  # the highest `max_tokens` a request may ask for
    # The longest reply kept, in characters (~1 million tokens): a reply that reaches it is
    # cut there and ends as an error saying so; the text up to it is kept (--max-reply-chars).
    max_reply_chars: int = 4_000_000
    max_title_chars: int = 500
    max_header_bytes: int = 32_768
    max_path_chars: int = 4096  # a file's or a folder's path, in a request or an imported file
    # One /v1/chat/completions request's messages, stop sequences (OpenAI's own most), tools,
    # and an image's https link (a data: URL is bounded by the body).
    max_messages: int = 10_000
    max_stop_sequences: int = 4
    max_tools: int = 128
    max_image_url_chars: int = 2048
    # A chat's turn: how often the stream may carry text at most (`pace_ms`: a window draws
    # at ~60 Hz, more events are work on both threads, no sooner seen), and the MCP servers
    # it may choose among.
    max_pace_ms: int = 1000
    max_tool_servers: int = 100
    max_list_chats: int = 10_000  # `GET /api/conversations?limit=`: the newest this many
    # What a follower far behind is sent at once (the pieces it missed, joined up to this).
    follow_piece_chars: int = 65_536
    # A folder an allow on an approval card reaches (`under`: server/agent/argument_scope.py).
    max_grant_prefix_chars: int = 4_096
    log_file_bytes: int = 1_000_000  # parley.log, before it is rotated
    # Characters of earlier tool calls (arguments and result) given back whole in a turn, the
    # newest first: at most this (about 4,000 tokens), and at most a quarter of the model's
    # context (server/agent/history.py), so that in a 2k-4k context they leave room for the rest.
    history_results_chars: int = 16_000
    # What a turn's guard remembers it read that the user did not write (server/agent/
    # provenance.py): past it, the first ones and the latest are kept.
    max_turn_sources: int = 200
    max_summary_chars: int = 100_000  # a summary the user edits
    # The status stream (GET /api/status/stream): how often it looks for a change, and after
    # how long with none it sends a comment, so proxies do not close it.
    status_poll: float = 0.25
    status_ping: float = 15.0
    header_timeout: float = 10.0
    body_timeout: float = 10.0
    send_timeout: float = 30.0
    drain_grace: float = 1.0
    stop_timeout: float = 5.0
    checkpoint_interval: float = 0.1
    db_busy_timeout: float = 5.0
    final_write_attempts: int = 3
    final_write_pause: float = 0.2  # before attempt n+1: n x this
    save_retry_interval: float = 1.0
    settled_wait: float = 30.0
    shutdown_runs_wait: float = 6.0
    graceful_shutdown: float = 8.0
    server_start_wait: float = 15.0
    server_stop_wait: float = 10.0
    close_settle_wait: float = 2.0
    upstream_connect_timeout: float = 10.0
    upstream_write_timeout: float = 30.0
    upstream_pool_timeout: float = 10.0
    upstream_read_timeout: float | None = 300.0
    tool_call_timeout: float = 60.0
    max_steps: int = 8
    relay_pause: float | None = None
    # Each part's own bounds (below), so every number of the house is in this one module.
    tools: ToolLimits = field(default_factory=lambda: ToolLimits())
    agents: AgentLimits = field(default_factory=lambda: AgentLimits())
    compaction: CompactionLimits = field(default_factory=lambda: CompactionLimits())
    library: LibraryLimits = field(default_factory=lambda: LibraryLimits())
    models: ModelLimits = field(default_factory=lambda: ModelLimits())
    transfer: TransferLimits = field(default_factory=lambda: TransferLimits())
    projects: ProjectLimits = field(default_factory=lambda: ProjectLimits())
    attachments: AttachmentLimits = field(default_factory=lambda: AttachmentLimits())
    hub: HubLimits = field(default_factory=lambda: HubLimits())
    scan: ScanLimits = field(default_factory=lambda: ScanLimits())
    memory: MemoryLimits = field(default_factory=lambda: MemoryLimits())
    gguf: GGUFLimits = field(default_factory=lambda: GGUFLimits())
    search: SearchLimits = field(default_factory=lambda: SearchLimits())

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if is_dataclass(value):
                continue  # a part's bounds
            if value is None or (name == "final_write_pause" and value == 0):
                continue  # no upstream read timeout, relay pause, or pause between writes
            if not value > 0:
                raise ValueError(f"Limits.{name} must be positive, got {value!r}")
        order = [
            ("stop_timeout", "shutdown_runs_wait"),
            ("shutdown_runs_wait", "graceful_shutdown"),
            ("graceful_shutdown", "server_stop_wait"),
            ("settle_bound", "settled_wait"),
        ]
        for shorter, longer in order:
            if not getattr(self, shorter) < getattr(self, longer):
                raise ValueError(
                    f"Limits.{shorter} ({getattr(self, shorter):g} s) must be shorter than "
                    f"Limits.{longer} ({getattr(self, longer):g} s); see the Limits docstring"
                )

    @property
    def settle_bound(self) -> float:
        """The longest one settle can take (see the class docstring)."""
        attempts = self.final_write_attempts
        pauses = self.final_write_pause * attempts * (attempts - 1) / 2
        return self.stop_timeout + attempts * self.db_busy_timeout + pauses


@dataclass(frozen=True)
class StopTimes:
    """How long a stopping MCP server gets: to exit after its stdin closes, then after
    SIGTERM to its process group (then SIGKILL)."""

    grace: float = 1.0
    terminate: float = 1.0


@dataclass(frozen=True)
class ToolLimits:
    """The MCP servers (server/tools/)."""

    start_timeout: float = 30.0  # spawn, initialize and list the tools (npx may download first)
    backoff_first: float = 1.0  # a crashed server's first restart waits this long
    backoff_most: float = 60.0
    stable_after: float = 30.0  # a server that ran this long before crashing starts over
    exit_code_wait: float = 0.5  # for a crashed server's exit code (the reason shown)
    exit_poll: float = 0.05  # how often a stopping server's exit is looked for
    config_poll: float = 1.0  # how soon a hand edit of mcp.json is applied
    config_bytes: int = 4_000_000  # mcp.json: far more than any; a hand-made mistake is refused
    # Settings' change of mcp.json is made again while the file keeps changing under it (saved
    # by hand between the read and the write), this many times at most; then it is refused.
    config_attempts: int = 20
    # Other apps' MCP configuration files, read to import their servers (tools/importing.py).
    import_file_bytes: int = 1_000_000
    import_read: float = 2.0  # one file's read
    # A server's resource read (browsed, attached, a result's link opened): its contents
    # decoded, all together (an image attachment's bound; as base64 it stays under the stdio
    # line bound, server/tools/stdio.py), and the time from the request to the answer, which
    # bounds a prompt's `prompts/get` too.
    resource_bytes: int = 10 * 1024 * 1024
    resource_time: float = 30.0
    # Listed resources, templates or prompts of one server kept (a list past it is cut).
    listed_most: int = 1_000
    links_per_result: int = 20  # a tool result's `resource_link`s kept on its step
    # A server's `instructions`, given to the model with its tools: the rest is cut, said.
    instructions_chars: int = 4_000
    # mcp.json's entries: a server's name, a tool's name, and an entry's own `timeout`.
    server_name_chars: int = 64
    tool_name_chars: int = 128
    max_call_timeout: float = 86_400.0
    line_bytes: int = 16_000_000  # one JSON-RPC message over stdio; longer: a broken server
    stderr_lines: int = 40  # a server's last lines on stderr, kept to say why it failed
    pages_most: int = 100  # pages of one list: a server that never stops paging is cut off
    # A server's resources and prompts as listed: the rest of each text is cut.
    uri_chars: int = 2_048
    name_chars: int = 200
    description_chars: int = 2_000
    mime_chars: int = 100
    prompt_arguments: int = 50  # of one prompt, listed or filled in
    # What the model is given of one tool's result (any tool: a server's, the documents'
    # search, a sub-agent's answer); the rest is cut, said.
    result_chars: int = 16_000
    prompt_argument_chars: int = 20_000  # one argument's value a user fills in
    # Signing in to a server (OAuth): a flow's redirect is taken this long after it starts;
    # the server's sign-in metadata is looked for this long; a keyring that hangs (a locked
    # Secret Service) holds a connect this long at most.
    redirect_ttl: float = 300.0
    sign_in_discovery: float = 10.0
    keyring_wait: float = 10.0
    # How long a file displaced by mcp.json's swap is watched for a save in place that opened
    # it just before (an editor descheduled inside its `open`): a few scheduling delays.
    late_save_grace: float = 0.05
    stop: StopTimes = field(default_factory=StopTimes)


@dataclass(frozen=True)
class AgentLimits:
    """Sub-agents (server/agent/delegate.py): how many, how deep, how long."""

    children_at_once: int = 4  # a reply's sub-agents that run at the same time; more wait
    max_depth: int = 1  # sub-agents of sub-agents: none by default
    max_steps: int = 6  # model calls of one sub-agent
    task_chars: int = 20_000  # a `delegate` call's task
    update_interval: float = 0.1  # a running sub-agent's step is sent at most this often


@dataclass(frozen=True)
class CompactionLimits:
    """Summarising a chat's earlier messages (server/agent/compaction.py)."""

    summary_tokens: int = 512  # the summary's own length at most (each round's answer)
    # Summarising calls of one compaction: what does not fit one call is read in rounds,
    # each going on from the summary the one before wrote. Each round is a model call with
    # a full prompt, so this bounds how long a turn waits for its compaction.
    max_rounds: int = 16
    # Tokens of a message worth another round (its first and last words, ~80 characters):
    # one round while it keeps each message this much, else as few rounds as do; more is
    # kept when those rounds have room.
    line_share: int = 24
    # Tokens a message is cut to at the least (~40 characters), when `max_rounds` cannot keep
    # `line_share` of each, before the oldest messages are left out of the rounds instead.
    line_floor: int = 12
    # Seconds between two words on how long a round's summary is so far (the window's note
    # while it is made); a round waits for a whole model call, tens of seconds on an engine.
    progress_interval: float = 1.0
    opening_chars: int = 1_500  # of the first question and of the first reply, kept word for word
    result_chars: int = (
        300  # of a tool's result, in the transcript line of the reply that called it
    )


@dataclass(frozen=True)
class LibraryLimits:
    """The user's documents (server/library/)."""

    read_time: float = 15.0  # one file (a stalled network share is skipped, not waited on)
    source_read_time: float = 5.0  # a cited source the window asks for
    parse_cpu: float = 20.0  # the worker's CPU per file: a 300-page PDF takes a few seconds
    parse_wall_grace: float = 10.0  # so a worker on a quarter of a core still has its budget
    parse_cpu_kill_grace: int = 2  # RLIMIT_CPU (whole seconds) above the timer
    # The parent's wall-time bound on one file: its CPU budget this many times over, plus
    # parse_wall_grace.
    parse_wall_factor: float = 4.0
    # The worker's address space (RLIMIT_AS): pypdf needs ~250 MB on the bomb.
    parse_memory_bytes: int = 1 << 30
    # Parse workers at once, the library's files and attached PDFs together (server/library/
    # pool.py): what parsing may cost is this many times parse_memory_bytes, whatever comes.
    parse_workers: int = 2
    worker_stop_wait: float = 2.0
    worker_idle: float = 60.0  # a parse worker is closed after this long with nothing to do
    watcher_ready_wait: float = 30.0  # its set-up walks the whole tree
    watcher_stop_wait: float = 2.0  # after stdin closes it ends within one watch step
    watcher_why_wait: float = 1.0  # for a failed watcher's last words
    # One step of the watch (watchfiles' rust_timeout): the watcher sees its stop within it.
    watcher_step: float = 0.1
    max_file_bytes: int = 20_000_000  # a file of a library folder (a larger one is skipped)
    # A file's text: as many characters as the largest file read; a PDF that gives more is
    # skipped, not indexed in part.
    max_text_chars: int = 20_000_000
    # A parse worker that grew past this is replaced after its file (Python keeps what it
    # allocated: a worker that parsed one big file would hold it for ever).
    worker_retire_bytes: int = 200 << 20
    # A cited source shown to the window: its lines (a passage's are far fewer), and one
    # line's characters (a minified file's one line is not shown whole).
    source_lines: int = 400
    source_line_chars: int = 2_000
    max_k: int = 20  # passages of one search of the library's HTTP API
    tool_max_k: int = 10  # passages the model may ask for in one search_documents call
    quote_chars: int = 200  # of a passage, quoted in a citation
    skipped_shown: int = 50  # a folder's skipped files listed with their reasons (the first)


@dataclass(frozen=True)
class ModelLimits:
    """The model backends (server/models/)."""

    engine_props_timeout: float = 5.0  # the engine's /props after it loads
    engine_stop_wait: float = 3.0  # an engine process to exit before it is killed
    engine_control_timeout: float = 30.0  # a load/unload order to the engine process
    gguf_header_time: float = 5.0  # a slow disk or a hostile file: give up and say so
    upstream_check_timeout: float = 5.0  # "Test" of a backend in Settings: connect, each read
    # An upstream's models list read whole (a slow link, a long list; an answer sent a byte
    # at a time ends here), and its size: thousands of entries fit in far less.
    upstream_list_time: float = 15.0
    upstream_list_bytes: int = 4 * 1024 * 1024
    upstream_detect_timeout: float = 1.5  # looking for a local server on a known port
    # An upstream asked how many tokens it serves at once (server/models/upstream_context.py):
    # each answer's time and size, and how soon a failed ask may be tried again.
    upstream_context_time: float = 3.0
    upstream_context_bytes: int = 4 * 1024 * 1024  # OpenRouter's /models lists hundreds
    upstream_context_retry: float = 60.0
    discovery_grace: float = 5.0  # a scan's thread after its own deadline
    # The memory local engines may take together, by their fits estimates (server/models/
    # residency.py); None: no cap of Parley's own, only the memory free (MemAvailable). Idle
    # engines are unloaded to keep a load within it; a load that cannot be is refused.
    memory_budget: int | None = None
    max_keep_alive: int = 7 * 86_400  # seconds an idle engine stays loaded; longer is "never"
    # An upstream's answers: an error's body kept (for the message), one SSE event's bytes.
    error_body_bytes: int = 2_000
    upstream_line_bytes: int = 4_000_000
    # A backend's settings in a request: its base URL and its API key.
    base_url_chars: int = 2_000
    api_key_chars: int = 1_000
    # An upstream's models list: the entries looked at, and a model's name.
    upstream_models_most: int = 1_000
    model_name_chars: int = 200
    upstream_context_entries: int = 10_000  # of a models list read for its context sizes
    ollama_parameters_chars: int = 100_000  # Ollama's `parameters` text, read for num_ctx


@dataclass(frozen=True)
class TransferLimits:
    """Imports, exports and the big reads (server/transfer/, server/storage/readers.py)."""

    import_batch_time: float = 0.02  # a batch's write: a checkpoint waits at most ~50 ms
    import_stop_wait: float = 10.0  # shutdown waits this long for an import's thread
    staging_busy_timeout: float = 1.0  # the staging file's lock
    index_busy_timeout: float = 10.0  # the search indexer's read of the database
    reader_give_up: float = 600.0  # a client that takes no piece for this long is gone
    reader_stop_poll: float = 0.1  # how often a blocked export's reader looks for a stop
    export_streams: int = 4  # exports read at once (each on its own thread); more wait
    export_ahead: int = 4  # pieces an export's reader may be ahead of its client
    # An import file's fields: an id, a conversation's key (a longer id is known by its
    # hash), an attachment's MIME type, a step's sources (the guard keeps the latest few).
    id_chars: int = 200
    key_chars: int = 200
    mime_chars: int = 100
    step_sources: int = 50


@dataclass(frozen=True)
class ProjectLimits:
    """Projects: chats grouped with their own instructions and library folders
    (server/projects/). A request or an imported project over these is refused, saying which."""

    max_name_chars: int = 200
    # The instructions go into every turn of the project's chats: a page or two, not a book
    # (the context meter counts them; a model with a small context would have no room left).
    max_instructions_chars: int = 20_000
    max_folders: int = 50  # library folders of one project
    max_imported: int = 1_000  # projects of one import file
    max_id_chars: int = 100  # a project's id in a request (Parley's are 32 hex digits)


@dataclass(frozen=True)
class AttachmentLimits:
    """Files attached to a message (server/attachments/)."""

    max_file_bytes: int = 20 * 1024 * 1024  # a text file or a PDF
    max_image_bytes: int = 10 * 1024 * 1024  # what upstreams accept (OpenAI: 20 MB a request)
    max_chars: int = 100_000  # of a file's text given to the model; the rest is left out, said
    max_per_message: int = 10
    max_name_chars: int = 200  # a file's name as kept
    # The images one model call carries (base64 makes them a third bigger): the newest first;
    # older ones are named to the model, not sent.
    max_request_image_bytes: int = 30 * 1024 * 1024
    upload_time: float = 120.0  # a body sent this slowly is refused (20 MB at 170 KB/s)
    parse_cpu: float = 20.0  # a PDF's text, in the library's parse workers
    # An image's width and height (WebP's own most; a 200-megapixel phone photo fits).
    max_image_side: int = 16_384
    read_time: float = 10.0  # an attachment's file read back (for the window, a model call)
    unsent_keep: float = 24 * 3600.0  # an upload never sent is deleted after this long


@dataclass(frozen=True)
class HubLimits:
    """Hugging Face: its API's answers and the downloads (server/models/hub/)."""

    # An API answer (search, a repository's files) larger than this is refused, not parsed.
    max_answer_bytes: int = 8 * 1024 * 1024
    # Seconds: to connect, and between two reads of an answer or a download.
    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    # Seconds for a whole API answer, however slowly it drips.
    answer_deadline: float = 60.0
    search_results: int = 50
    # How often a download's bytes on disk are read (progress, and the size bound).
    poll_interval: float = 0.2
    # The window the rate (and so the time left) is measured over.
    rate_window: float = 3.0
    # Free space a download leaves on its disk (a full disk stops everything else too).
    disk_reserve: int = 256 * 1024 * 1024
    # What a download child writes to disk at a time (huggingface_hub's default is 10 MiB):
    # the step of the progress, and at most what a kill loses.
    chunk_bytes: int = 1024 * 1024
    # The child's own last words (a JSON line, and its stderr tail) are read up to this.
    child_output_bytes: int = 64 * 1024
    # Seconds with no new byte on disk before a download fails as `connection_lost` (resumable)
    # and the queue moves on: a hub that drips a byte now and then passes every read timeout
    # and would hold the queue for ever. Bytes reach the disk `chunk_bytes` at a time, so this
    # is also the slowest transfer kept going (1 MiB a minute, ~17 KB/s).
    stall_timeout: float = 60.0
    # At shutdown: the downloads are paused (their children killed) and remembered within this.
    shutdown_wait: float = 10.0
    max_query_chars: int = 200  # a search of the hub
    reason_chars: int = 200  # of a download's failure in its own words, in a user's message


@dataclass(frozen=True)
class ScanLimits:
    """One scan for GGUFs on disk (server/models/discovery/): entries, depth, files, time."""

    seconds: float = 30.0  # the whole scan; a stalled disk or a huge tree stops it here
    max_entries: int = 200_000  # directory entries looked at, across every place
    max_depth: int = 8  # folders below a place's root (LM Studio's files are 2 below)
    max_files: int = 10_000  # GGUF candidates examined (a header read, or a stat, each)
    max_manifests: int = 10_000  # Ollama manifests read
    max_manifest_bytes: int = 1_000_000  # a real one is ~1 KB
    max_layers: int = 1_000  # layers of one manifest looked at
    header_seconds: float = 5.0  # one file's header (server/models/gguf.py's own bound)
    max_skipped: int = 200  # skipped files reported (the count is always whole)
    max_places: int = 20  # places listed for one file
    # The folders a user adds to be scanned (model_folders.json), and that file's size.
    max_folders: int = 100
    folders_file_bytes: int = 1_000_000
    settings_bytes: int = 256_000  # LM Studio's settings.json, read for its models folder


@dataclass(frozen=True)
class MemoryLimits:
    """What the assistant remembers, kept as Markdown files the user owns (server/memory/)."""

    # A memory file read whole, and given whole to the model: a larger file (or one with
    # binary bytes) is refused with an error saying so, and never rewritten by Parley.
    max_bytes: int = 64 * 1024
    max_line_chars: int = 500  # one line the model proposes to remember
    read_time: float = 5.0  # a memory file's read (a stalled disk is not waited on for ever)
    # A change (a line added or forgotten) is made again over the file as saved while a hand
    # edit keeps landing between Parley's read and its write, this many times; then refused.
    write_attempts: int = 20


@dataclass(frozen=True)
class GGUFLimits:
    """A GGUF file's header, read to know a model (server/models/gguf.py): a damaged or hostile
    file is refused at these, not read for ever. The real files here: SmolLM2 33 keys, 98,097
    strings, 147,205 array items, 272 tensors, 1.8 MB; Llama 3 has ~410,000 strings (tokens
    and merges) in ~10 MB."""

    max_dims: int = 8  # of one tensor
    max_string_bytes: int = 16_000_000  # a chat template or a merges entry is far smaller
    max_keys: int = 10_000
    max_tensors: int = 200_000  # a big mixture-of-experts model has a few thousand
    max_strings: int = 2_000_000  # keys, string values, array items and tensor names together
    max_array_items: int = 20_000_000  # every array's items (numbers are skipped, not read)
    max_header_bytes: int = 512_000_000  # read or skipped, up to where the tensor data begins
    max_template_bytes: int = 1_000_000  # read to see whether it takes tools; longer: skipped


@dataclass(frozen=True)
class SearchLimits:
    """The search of the chats (server/storage/search.py)."""

    candidates: int = 2_000  # the newest matching messages that are ranked
    scan_chars: int = 200_000  # of a long message, looked through for its snippet
    max_chats: int = 100  # chats returned for their messages (titles that match come after)
