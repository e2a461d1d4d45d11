/**
 * Every key of upstream's DEFAULT_CONFIG (the inventory's §8 list, at the depth `hermes config set`
 * addresses them) is known: `hermes doctor`, `config check` and `config set` must never call a
 * valid Python Hermes key unknown. The typo look-alikes next to them stay errors.
 */
import { describe, expect, it } from "vitest";
import { checkKey } from "../../../src/config/validate.js";

// biome-ignore format: one long table of upstream's keys
const UPSTREAM_KEYS: string[] = [
// Siblings of `model` at the top level in upstream's DEFAULT_CONFIG, and the model mapping's own keys.
"providers","fallback_providers","fallback_model","credential_pool_strategies","custom_providers","model_aliases","provider_routing","openrouter.response_cache","bedrock.region","vertex.project_id","model_catalog.enabled",
"model.default","model.provider","model.base_url","model.api_key","model.api_mode","model.context_length","model.max_tokens",
"toolsets","platform_toolsets","custom_toolsets","tools.tool_search.enabled",
...["max_turns","gateway_timeout","gateway_timeout_warning","gateway_notify_interval","gateway_auto_continue_freshness","restart_drain_timeout","api_max_retries","service_tier","reasoning_effort","tool_use_enforcement","intent_ack_continuation","task_completion_guidance","parallel_tool_call_guidance","environment_probe","environment_hint","coding_context","coding_instructions","verify_guidance","max_verify_nudges","verify_on_stop","clarify_timeout","image_input_mode","disabled_toolsets","personalities"].map(k=>"agent."+k),
"max_concurrent_sessions","max_live_sessions","group_sessions_per_user","session_reset","unauthorized_dm_behavior",
...["backend","modal_mode","cwd","timeout","lifetime_seconds","daemon_term_grace_seconds","env_passthrough","credential_files","home_mode","shell_init_files","auto_source_bashrc","persistent_shell","docker_image","singularity_image","modal_image","daytona_image","docker_forward_env","docker_env","docker_volumes","docker_mount_cwd_to_workspace","docker_extra_args","docker_run_as_host_user","docker_persist_across_processes","docker_orphan_reaper","container_cpu","container_memory","container_disk","container_persistent","file_sync_enabled","file_sync_max_mb","sudo_password","ssh_host","ssh_user","ssh_port","ssh_key"].map(k=>"terminal."+k),
"web.backend","web.search_backend","web.extract_backend","web.extract_char_limit","x_search.model",
...["inactivity_timeout","command_timeout","record_sessions","allow_private_urls","engine","auto_local_for_private_urls","cdp_url","allow_unsafe_evaluate","dialog_policy","dialog_timeout_s","camofox.managed_persistence","camofox.user_id","camofox.session_key","camofox.adopt_existing_tab","camofox.rewrite_loopback_urls","camofox.loopback_host_alias"].map(k=>"browser."+k),
...["enabled","max_snapshots","max_total_size_mb","max_file_size_mb","auto_prune","retention_days","delete_orphans","min_interval_hours","worktree","worktree_sync"].map(k=>"checkpoints."+k),
"limits.context_file_max_chars","limits.file_read_max_chars","limits.mcp_discovery_timeout","limits.tool_output.max_bytes","limits.tool_output.max_lines","limits.tool_output.max_line_length",
"tool_loop_guardrails.warnings_enabled","tool_loop_guardrails.hard_stop_enabled","tool_loop_guardrails.warn_after.exact_failure","tool_loop_guardrails.warn_after.same_tool_failure","tool_loop_guardrails.warn_after.idempotent_no_progress","tool_loop_guardrails.hard_stop_after.exact_failure","tool_loop_guardrails.hard_stop_after.same_tool_failure","tool_loop_guardrails.hard_stop_after.idempotent_no_progress",
...["enabled","threshold","target_ratio","protect_last_n","protect_first_n","hygiene_hard_message_limit","abort_on_summary_failure","codex_gpt55_autoraise","in_place"].map(k=>"compression."+k),
"context.engine","prompt_caching.cache_ttl","auxiliary.vision.provider",
...["compact","personality","interface","skin","language","streaming","show_reasoning","reasoning_full","reasoning_style","show_cost","timestamps","bell_on_complete","busy_input_mode","busy_ack_enabled","busy_ack_detail","tool_progress","tool_progress_command","tool_progress_grouping","tool_progress_overrides","tool_preview_length","friendly_tool_labels","interim_assistant_messages","long_running_notifications","cleanup_progress","background_process_notifications","memory_notifications","final_response_markdown","persistent_output","persistent_output_max_lines","persist_prompts","inline_diffs","file_mutation_verifier","credits_notices","turn_completion_explainer","resume_display","resume_exchanges","tui_status_indicator","tui_auto_resume_recent","tui_agents_nudge","cli_refresh_interval","user_message_preview.first_lines","user_message_preview.last_lines","ephemeral_system_ttl","copy_shortcut","platforms.telegram.streaming","platforms.discord.streaming","platforms.telegram.runtime_footer.enabled","runtime_footer.enabled","runtime_footer.fields","pet.enabled","pet.slug","pet.render_mode","pet.scale","pet.unicode_cols"].map(k=>"display."+k),
...["enabled","transport","edit_interval","buffer_threshold","cursor","fresh_final_after_seconds"].map(k=>"streaming."+k),
...["memory_enabled","user_profile_enabled","write_approval","memory_char_limit","user_char_limit","provider","nudge_interval","flush_min_turns"].map(k=>"memory."+k),"honcho",
...["external_dirs","template_vars","inline_shell","inline_shell_timeout","guard_agent_created","write_approval","creation_nudge_interval","config","disabled"].map(k=>"skills."+k),
...["enabled","interval_hours","min_idle_hours","stale_after_days","archive_after_days","consolidate","prune_builtins","backup.enabled","backup.keep"].map(k=>"curator."+k),
...["model","provider","base_url","api_key","api_mode","inherit_mcp_toolsets","max_iterations","max_summary_chars","child_timeout_seconds","reasoning_effort","max_concurrent_children","max_async_children","max_spawn_depth","orchestrator_enabled","subagent_auto_approve"].map(k=>"delegation."+k),
"code_execution.mode","code_execution.timeout","code_execution.max_tool_calls","goals.max_turns","moa.default_preset",
"tts.provider","tts.edge.voice","stt.enabled","stt.provider","stt.local.model",
...["record_key","max_recording_seconds","auto_tts","beep_enabled","silence_threshold","silence_duration"].map(k=>"voice."+k),
"human_delay.mode","human_delay.min_ms","human_delay.max_ms",
...["mode","timeout","cron_mode","mcp_reload_confirm","destructive_slash_confirm"].map(k=>"approvals."+k),"command_allowlist","hooks","hooks_auto_accept",
...["allow_private_urls","redact_secrets","tirith_enabled","tirith_path","tirith_timeout","tirith_fail_open","website_blocklist.enabled","website_blocklist.domains","website_blocklist.shared_files","acked_advisories","allow_lazy_installs"].map(k=>"security."+k),"privacy.redact_pii","secrets.bitwarden.enabled",
"cron.provider","cron.wrap_response","cron.mirror_delivery","cron.max_parallel_jobs","cron.output_retention","kanban.dispatch_in_gateway",
"gateway.platform_connect_timeout","gateway.strict","quick_commands","platform_hints","mcp_servers",
"plugins.disabled","plugins.enabled","logging.level","logging.max_size_mb","logging.backup_count",
"sessions.auto_prune","sessions.retention_days","sessions.vacuum_after_prune","sessions.min_interval_hours","sessions.write_json_snapshots",
"updates.pre_update_backup","updates.backup_keep","updates.non_interactive_local_changes","lsp.enabled","dashboard.theme","onboarding.seen","network.force_ipv4","computer_use.cua_telemetry","desktop.electron_flags","timezone","prefill_messages_file","paste_collapse_threshold","paste_collapse_char_threshold","_config_version",
];

describe("upstream's DEFAULT_CONFIG keys", () => {
  it("are all known (no unknown_key problem)", () => {
    const unknown = UPSTREAM_KEYS.map((key) => checkKey(key)).filter((p) => p !== undefined);
    expect(unknown).toEqual([]);
  });

  it("typos next to them are still reported, with the key meant", () => {
    for (const [typo, meant] of [
      ["agent.max_turn", "agent.max_turns"],
      ["display.runtime_foter", "display.runtime_footer"],
      ["checkpoints.worktre", "checkpoints.worktree"],
      ["compression.protect_last", "compression.protect_last_n"],
      ["security.tirith_enable", "security.tirith_enabled"],
    ] as const) {
      expect(checkKey(typo)?.suggestion, typo).toBe(meant);
    }
  });
});
