/**
 * The commented config.yaml that `hermes config edit` creates when none exists. Every setting is
 * commented out, so the new file means exactly the built-in defaults.
 */

export const CONFIG_TEMPLATE = `# Hermes configuration. Values set here override the built-in defaults; anything left out
# keeps its default. Secrets (API keys, bot tokens) belong in .env next to this file:
#   hermes config set OPENROUTER_API_KEY sk-or-...
# String values may reference environment variables: \${VAR} or \${VAR:-fallback}.
# Check this file with: hermes config check

# model:
#   default: "anthropic/claude-sonnet-4"   # or just  model: "provider/name"
#   provider: openrouter
#   base_url: ""
#   context_length: null                  # null: look it up

# toolsets: [hermes-cli]

# agent:
#   max_turns: 90
#   reasoning_effort: medium

# terminal:
#   backend: local                        # local | docker | podman | ssh | singularity | daytona | modal
#   cwd: "."
#   timeout: 180
#   env_passthrough: []                   # variables the terminal may see besides the usual ones
#   credential_files: []                  # host files mounted read-only into a container backend
#   docker_image: "nikolaik/python-nodejs:python3.11-nodejs20"
#   docker_volumes: []                    # ["/host/dir:/container/dir:ro"]
#   docker_env: {}
#   docker_forward_env: []                # host variables passed into the container (none by default)
#   docker_mount_cwd_to_workspace: false
#   docker_run_as_host_user: false
#   docker_extra_args: []
#   docker_persist_across_processes: true
#   docker_orphan_reaper: true
#   container_cpu: 1
#   container_memory: 5120                # MB
#   container_disk: 51200                 # MB (needs overlay2 on XFS with quotas)
#   container_persistent: true
#   ssh_host: ""                          # or TERMINAL_SSH_HOST
#   ssh_user: ""
#   ssh_port: 22
#   ssh_key: ""
#   file_sync_enabled: true
#   file_sync_max_mb: 100
#   singularity_image: "docker://nikolaik/python-nodejs:python3.11-nodejs20"
#   daytona_image: "nikolaik/python-nodejs:python3.11-nodejs20"
#   modal_image: "nikolaik/python-nodejs:python3.11-nodejs20"
#   modal_mode: auto

# display:
#   streaming: true
#   show_cost: false

# approvals:
#   mode: manual                          # manual | smart | off

# checkpoints:                          # snapshots before the agent changes files; /rollback restores
#   enabled: false                        # or per run: hermes --checkpoints
#   max_snapshots: 20                     # per working directory
#   max_total_size_mb: 500
#   max_file_size_mb: 10                  # bigger files are left out
#   max_files: 50000                      # a directory with more files is not checkpointed
#   auto_prune: true                      # drop gone/stale directories, at most every min_interval_hours
#   retention_days: 7
#   delete_orphans: true
#   min_interval_hours: 24
# worktree: false                         # true: every session in its own git worktree (hermes -w)
# worktree_sync: true                     # start worktrees from the fetched remote branch

# delegation:                             # delegate_task subagents, /background
#   max_iterations: 50                    # model calls per child
#   max_concurrent_children: 3            # children of one batch running at once
#   max_async_children: 3                 # background children running at once
#   max_spawn_depth: 1                    # orchestrator children may delegate below this depth
#   child_timeout_seconds: 0              # 0: no time limit
#   model: ""                             # children's model/provider; empty: the parent's
#   provider: ""

# memory:
#   memory_enabled: true
#   user_profile_enabled: true

# mcp_servers:
#   filesystem:
#     command: npx
#     args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
`;
