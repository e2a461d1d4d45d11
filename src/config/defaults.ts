/**
 * Built-in configuration defaults, using Python Hermes's key names so an existing `config.yaml`
 * keeps its meaning. `config.yaml` is deep-merged over these; unknown keys are kept untouched.
 */

export interface ModelConfig {
  default: string;
  provider: string;
  base_url: string;
  api_key: string;
  api_mode: string;
  context_length: number | null;
  max_tokens: number | null;
  /** How azure-foundry authenticates: "" or "api_key" (the `api-key` header), "entra_id" (an Entra ID bearer). */
  auth_mode: string;
  /**
   * Entra ID settings for `auth_mode: entra_id`; an empty scope means Foundry's
   * (`https://ai.azure.com/.default`). `exclude_interactive_browser` is upstream's key, accepted so
   * a shared home validates; Hermes-TS never opens a browser to sign in.
   */
  entra: { scope: string; exclude_interactive_browser: boolean };
}

export interface GuardrailCounts {
  exact_failure: number;
  same_tool_failure: number;
  idempotent_no_progress: number;
}

export interface HermesConfig {
  model: ModelConfig;
  toolsets: string[];
  custom_toolsets: Record<string, { tools?: string[]; includes?: string[]; description?: string }>;
  agent: {
    max_turns: number;
    api_max_retries: number;
    reasoning_effort: string;
    disabled_toolsets: string[];
    save_trajectories: boolean;
    clarify_timeout: number;
    /** Seconds a started response stream may send nothing before it is cut as stalled (0: never). */
    stream_stall_timeout: number;
    /**
     * Seconds running chat turns get once the gateway stops (SIGTERM, or the last phase of a
     * restart) before they are interrupted and their chats told; 0 interrupts at once (upstream).
     */
    restart_drain_timeout: number;
    /** A restart (`/restart`, SIGUSR1) first waits this long for running turns to end on their own. */
    restart_after_turn_timeout: number;
    /** Seconds a running cron job gets when the gateway stops, before its script and agent are stopped. */
    cron_drain_timeout: number;
    /** Seconds between "still working" notes in a chat while a turn runs (0: none). */
    gateway_notify_interval: number;
    /** Seconds a turn may show no activity before the chat is warned, once (0: never). */
    gateway_timeout_warning: number;
    /** Seconds a turn may show no activity before it is interrupted (0: never). */
    gateway_timeout: number;
    /**
     * A turn cut off by a restart is continued by the next message only when the cut is younger
     * than this many seconds (0: always).
     */
    gateway_auto_continue_freshness: number;
    [key: string]: unknown;
  };
  terminal: {
    backend: string;
    cwd: string;
    timeout: number;
    persistent_shell: boolean;
    env_passthrough: string[];
    shell_init_files: string[];
    auto_source_bashrc: boolean;
    /** Seconds an idle persistent shell is kept; the next command rebuilds it with its state. */
    lifetime_seconds: number;
    /** Seconds between SIGTERM and SIGKILL when a command is stopped (timeout, interrupt). */
    daemon_term_grace_seconds: number;
    [key: string]: unknown;
  };
  display: {
    compact: boolean;
    personality: string;
    streaming: boolean;
    show_reasoning: boolean;
    show_cost: boolean;
    tool_progress: string;
    /** Text typed while a turn runs: `interrupt` (stop it and send), `queue` (send after), `steer`. */
    busy_input_mode: string;
    /** One line in the REPL when a background review saved something: "on" or "off". */
    memory_notifications: string;
    /**
     * Upstream's runtime footer. The REPL's status line shows `fields` in order (model,
     * context_pct, tokens, cost, cwd, provider; unset: all but provider); `enabled` is upstream's
     * switch for the footer on gateway replies. No default here: unset means the REPL's own list.
     */
    runtime_footer?: { enabled?: boolean; fields?: string[] };
    [key: string]: unknown;
  };
  limits: {
    context_file_max_chars: number | null;
    file_read_max_chars: number;
    tool_output: { max_bytes: number; max_lines: number; max_line_length: number };
  };
  sessions: {
    /** Delete ended sessions older than `retention_days` at start-up, at most every `min_interval_hours`. */
    auto_prune: boolean;
    retention_days: number;
    vacuum_after_prune: boolean;
    min_interval_hours: number;
    [key: string]: unknown;
  };
  state: {
    /**
     * How hard `state.db` commits: `normal` (WAL, synchronous=NORMAL: every message survives a
     * killed or crashed hermes; a power cut or OS crash may lose the last transaction) or `full`
     * (each commit fsynced: survives a power cut too, at about a millisecond per message).
     */
    durability: "normal" | "full";
    /**
     * Where the state lives: `sqlite` (state.db and the files of the home, the default) or
     * `postgres` (one PostgreSQL database shared by every gateway instance; `url` or
     * `HERMES_DATABASE_URL` names it).
     */
    backend: "sqlite" | "postgres";
    /** PostgreSQL connection URL (`postgres://user:pass@host:5432/db`); `HERMES_DATABASE_URL` wins. */
    url: string;
    /** Connections each process keeps open to PostgreSQL at most. */
    pool_size: number;
  };
  tool_loop_guardrails: {
    warnings_enabled: boolean;
    hard_stop_enabled: boolean;
    warn_after: GuardrailCounts;
    hard_stop_after: GuardrailCounts;
  };
  approvals: { mode: string; timeout: number; cron_mode: string };
  /** Cron scripts: seconds a job's `script` may run before its process group is killed. */
  cron: { script_timeout_seconds: number; [key: string]: unknown };
  command_allowlist: string[];
  /** Shell hooks per event (`hooks.<event>: [{matcher, command, timeout}]`; agent/shell-hooks/). */
  hooks: Record<string, unknown>;
  /** Run shell hooks not yet approved without asking (as `--accept-hooks` does). */
  hooks_auto_accept: boolean;
  memory: {
    memory_enabled: boolean;
    user_profile_enabled: boolean;
    memory_char_limit: number;
    user_char_limit: number;
    /** User turns between background memory reviews (0: never). */
    nudge_interval: number;
    /** Unreviewed user turns worth a review before compression or `/new` drops them (0: never). */
    flush_min_turns: number;
    /** Wall-clock budget of one background review, all its requests together (seconds). */
    review_budget_seconds: number;
    /** Stage the agent's memory writes under `pending/memory/` for the user to approve. */
    write_approval: boolean;
    [key: string]: unknown;
  };
  skills: {
    /** Extra skill folders scanned after the home's `skills/` (a home copy of the same name wins). */
    external_dirs: string[];
    /** Skill names never listed or loaded. */
    disabled: string[];
    /** Tool iterations between background skill reviews (0: never). */
    creation_nudge_interval: number;
    /** Stage the agent's skill writes under `pending/skills/` for the user to approve. */
    write_approval: boolean;
    [key: string]: unknown;
  };
  security: { allow_private_urls: boolean; redact_secrets: boolean; [key: string]: unknown };
  /** `logs/agent.log`, `errors.log`, `gateway.log`: the least level written, rotation size and copies kept. */
  logging: { level: string; max_size_mb: number; backup_count: number };
  code_execution: { mode: string; timeout: number; max_tool_calls: number };
  delegation: {
    /** Model calls each child may make. */
    max_iterations: number;
    /** Children of one `delegate_task` batch that run at once. */
    max_concurrent_children: number;
    /** Background children (`background: true`, `/background`) running at once per process. */
    max_async_children: number;
    /** How deep orchestrator children may delegate (1: only the top agent delegates). */
    max_spawn_depth: number;
    /** false: every child is a leaf, whatever `role` asks. */
    orchestrator_enabled: boolean;
    /** Stop a child after this long (0: no limit beyond its iteration budget). */
    child_timeout_seconds: number;
    max_summary_chars: number;
    subagent_auto_approve: boolean;
    /** Children's model and provider; empty: the parent's. */
    model: string;
    provider: string;
    base_url: string;
    api_key: string;
    api_mode: string;
    reasoning_effort: string;
    [key: string]: unknown;
  };
  compression: { enabled: boolean; threshold: number; target_ratio: number; [key: string]: unknown };
  /** Snapshots of the working directory before the agent changes files (`/rollback`); upstream's keys. */
  checkpoints: {
    enabled: boolean;
    /** Checkpoints kept per working directory. */
    max_snapshots: number;
    /** The whole store's cap; the oldest checkpoints go first. */
    max_total_size_mb: number;
    /** Files larger than this are left out of checkpoints. */
    max_file_size_mb: number;
    /** A working directory with more files than this is not checkpointed (Hermes-TS; upstream's fixed 50 000). */
    max_files: number;
    auto_prune: boolean;
    retention_days: number;
    delete_orphans: boolean;
    min_interval_hours: number;
    [key: string]: unknown;
  };
  prompt_caching: { cache_ttl: string };
  /**
   * Plugins under `<home>/plugins/`: only those named in `enabled` load (a folder that appears is
   * never loaded on its own); `disabled` wins over `enabled` (upstream's two lists).
   */
  plugins: { enabled: string[]; disabled: string[]; [key: string]: unknown };
  /**
   * Gateway hooks under `<home>/hooks/<name>/` (HOOK.yaml + handler.js): only the folders named in
   * `enabled` run (upstream runs every folder; here they need the same consent as plugins);
   * `timeout`: seconds a handler may run before it is reported as hung.
   */
  gateway_hooks: { enabled: string[]; timeout: number; [key: string]: unknown };
  /** Anything else the user wrote (mcp_servers, platform sections, ...) is preserved as-is. */
  [key: string]: unknown;
}

/** Upstream's default image for docker, singularity (as `docker://`), modal and daytona. */
export const DEFAULT_SANDBOX_IMAGE = "nikolaik/python-nodejs:python3.11-nodejs20";

export function defaultConfig(): HermesConfig {
  return {
    model: {
      default: "",
      provider: "",
      base_url: "",
      api_key: "",
      api_mode: "",
      context_length: null,
      max_tokens: null,
      auth_mode: "",
      entra: { scope: "", exclude_interactive_browser: true },
    },
    toolsets: ["hermes-cli"],
    custom_toolsets: {},
    agent: {
      max_turns: 90,
      api_max_retries: 3,
      reasoning_effort: "",
      disabled_toolsets: [],
      save_trajectories: false,
      clarify_timeout: 3600,
      stream_stall_timeout: 60,
      // The gateway's lifecycle: upstream's keys and defaults.
      restart_drain_timeout: 0,
      restart_after_turn_timeout: 1800,
      cron_drain_timeout: 30,
      gateway_notify_interval: 180,
      gateway_timeout_warning: 900,
      gateway_timeout: 1800,
      gateway_auto_continue_freshness: 3600,
    },
    terminal: {
      backend: "local",
      cwd: ".",
      timeout: 180,
      persistent_shell: true,
      env_passthrough: [],
      shell_init_files: [],
      auto_source_bashrc: true,
      lifetime_seconds: 300,
      daemon_term_grace_seconds: 2.0,
      // Execution environments (src/environments/), upstream's names and defaults.
      modal_mode: "auto",
      home_mode: "auto",
      credential_files: [],
      docker_image: DEFAULT_SANDBOX_IMAGE,
      singularity_image: `docker://${DEFAULT_SANDBOX_IMAGE}`,
      modal_image: DEFAULT_SANDBOX_IMAGE,
      daytona_image: DEFAULT_SANDBOX_IMAGE,
      docker_forward_env: [],
      docker_env: {},
      docker_volumes: [],
      docker_mount_cwd_to_workspace: false,
      docker_extra_args: [],
      docker_run_as_host_user: false,
      docker_persist_across_processes: true,
      docker_orphan_reaper: true,
      container_cpu: 1,
      container_memory: 5120,
      container_disk: 51200,
      container_persistent: true,
      file_sync_enabled: true,
      file_sync_max_mb: 100,
      ssh_host: "",
      ssh_user: "",
      ssh_port: 22,
      ssh_key: "",
    },
    display: {
      compact: false,
      personality: "",
      streaming: true,
      show_reasoning: false,
      show_cost: false,
      tool_progress: "all",
      busy_input_mode: "interrupt",
      memory_notifications: "on",
    },
    limits: {
      context_file_max_chars: null,
      file_read_max_chars: 100_000,
      tool_output: { max_bytes: 50_000, max_lines: 2000, max_line_length: 2000 },
    },
    sessions: {
      auto_prune: false,
      retention_days: 90,
      vacuum_after_prune: true,
      min_interval_hours: 24,
    },
    state: { durability: "normal", backend: "sqlite", url: "", pool_size: 10 },
    tool_loop_guardrails: {
      warnings_enabled: true,
      hard_stop_enabled: false,
      warn_after: { exact_failure: 2, same_tool_failure: 3, idempotent_no_progress: 2 },
      hard_stop_after: { exact_failure: 5, same_tool_failure: 8, idempotent_no_progress: 5 },
    },
    approvals: { mode: "manual", timeout: 60, cron_mode: "deny" },
    cron: { script_timeout_seconds: 120 },
    command_allowlist: [],
    hooks: {},
    hooks_auto_accept: false,
    memory: {
      memory_enabled: true,
      user_profile_enabled: true,
      memory_char_limit: 2200,
      user_char_limit: 1375,
      nudge_interval: 10,
      flush_min_turns: 6,
      review_budget_seconds: 60,
      write_approval: false,
    },
    skills: { external_dirs: [], disabled: [], creation_nudge_interval: 15, write_approval: false },
    /** The skill curator (knowledge/curator/): upstream's keys and defaults. */
    curator: {
      enabled: true,
      interval_hours: 168,
      min_idle_hours: 2,
      stale_after_days: 30,
      archive_after_days: 90,
      consolidate: false,
      backup: { enabled: true, keep: 5 },
    },
    security: { allow_private_urls: false, redact_secrets: true },
    logging: { level: "INFO", max_size_mb: 5, backup_count: 3 },
    code_execution: { mode: "project", timeout: 300, max_tool_calls: 50 },
    delegation: {
      max_iterations: 50,
      max_concurrent_children: 3,
      max_async_children: 3,
      max_spawn_depth: 1,
      orchestrator_enabled: true,
      child_timeout_seconds: 0,
      max_summary_chars: 24_000,
      subagent_auto_approve: false,
      model: "",
      provider: "",
      base_url: "",
      api_key: "",
      api_mode: "",
      reasoning_effort: "",
    },
    compression: { enabled: true, threshold: 0.5, target_ratio: 0.2 },
    checkpoints: {
      enabled: false,
      max_snapshots: 20,
      max_total_size_mb: 500,
      max_file_size_mb: 10,
      max_files: 50_000,
      auto_prune: true,
      retention_days: 7,
      delete_orphans: true,
      min_interval_hours: 24,
    },
    prompt_caching: { cache_ttl: "5m" },
    plugins: { enabled: [], disabled: [] },
    gateway_hooks: { enabled: [], timeout: 10 },
    /** Tried in order when the primary provider fails for good: `{provider, model, base_url?, api_key?}`. */
    fallback_providers: [],
  };
}
