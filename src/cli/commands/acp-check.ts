/**
 * `hermes acp --check`: what an editor connecting to `hermes acp` would get, without an editor:
 * the SDK loads, the `initialize` answer, the provider and model, and the tools of an editor
 * session (`platform_toolsets.acp`, default `hermes-acp`). Exit 0 when an editor could start a
 * session, 1 when not (the line says what to fix).
 */
import type { ConfigContext } from "../command.js";

export async function acpCheck(ctx: ConfigContext): Promise<number> {
  const { io, home, config, env } = ctx;
  let ok = true;
  let protocolVersion = 1;
  try {
    const { loadAcpSdk } = await import("../../agent/acp-sdk.js");
    protocolVersion = loadAcpSdk().PROTOCOL_VERSION;
    io.out(`✓ ACP SDK loaded (protocol version ${protocolVersion})`);
  } catch (error) {
    ok = false;
    io.out(
      `✗ the ACP SDK (@agentclientprotocol/sdk) did not load: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const { initializeResponse, providerStatus, ACP_SOURCE } = await import("../../acp/server.js");
  const provider = providerStatus({ home, config, env });
  if (provider.ok) {
    io.out(`✓ provider ${provider.resolved.provider}, model ${provider.resolved.model || "(the server's)"}`);
  } else {
    ok = false;
    io.out(`✗ no provider: ${provider.message}`);
  }
  const { platformToolsets } = await import("../../tools/platform-tools.js");
  const { resolveToolsets } = await import("../../tools/toolsets.js");
  const { createBuiltinRegistry } = await import("../../tools/builtin.js");
  const toolsets = platformToolsets(config as unknown as Record<string, unknown>, ACP_SOURCE);
  const registry = createBuiltinRegistry();
  const resolved = resolveToolsets(toolsets, {
    custom: config.custom_toolsets,
    disabled: config.agent.disabled_toolsets,
    knownTools: new Set(registry.names()),
  });
  const available = await registry.available(resolved.tools, {
    env,
    config: config as Record<string, unknown>,
    home,
  });
  io.out(`✓ toolsets ${toolsets.join(", ")}: ${available.length} tools (${available.join(", ")})`);
  io.out("initialize answer:");
  io.out(JSON.stringify(initializeResponse(protocolVersion, provider.ok), null, 2));
  io.out(ok ? "Ready: point your editor at `hermes acp`." : "Not ready: fix the ✗ lines above.");
  return ok ? 0 : 1;
}
