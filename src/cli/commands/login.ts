/**
 * `hermes login [provider]` and `hermes logout [provider]`: the names Python Hermes users know for
 * `hermes auth add <provider> --type oauth` and `hermes auth logout <provider>`. Login defaults to
 * Nous Portal, as upstream's did; logout to the login auth.json marks active.
 */
import { Option } from "commander";
import { AuthStoreError } from "../../config/auth-store.js";
import { CliFailure, defineCommand } from "../command.js";
import { authContext } from "./auth.js";
import { activeLogin, oauthLogin, oauthLogout, oauthProvider } from "./auth-oauth.js";

function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0)
    throw new CliFailure(`--timeout expects whole seconds above 0, got "${value}".`, 2);
  return n;
}

export const loginCommand = defineCommand({
  name: "login",
  description:
    "log in with OAuth (Nous Portal by default; openai-codex, anthropic, copilot, xai-oauth, qwen-oauth, minimax-oauth), replacing that provider's login",
  needs: "home",
  open: ({ home, io }) => authContext(io, home),
  expected: (error) => (error instanceof AuthStoreError ? 2 : undefined),
  parse: (root, run) => {
    root
      .argument(
        "[provider]",
        "nous (default), openai-codex, anthropic, copilot, xai-oauth, qwen-oauth or minimax-oauth",
      )
      .addOption(new Option("--provider <provider>", "same as the argument"))
      .option("--timeout <seconds>", "give up waiting for the browser approval after this long", seconds)
      .option("--region <region>", "minimax-oauth: global (minimax.io, default) or cn (minimaxi.com)")
      .action(
        run(
          (
            ctx,
            provider: string | undefined,
            flags: { provider?: string; timeout?: number; region?: string },
          ) =>
            oauthLogin(ctx, oauthProvider(provider ?? flags.provider ?? "nous"), {
              timeout: flags.timeout,
              region: flags.region,
            }),
        ),
      );
  },
});

export const logoutCommand = defineCommand({
  name: "logout",
  description: "forget an OAuth login (default: the active one): same as hermes auth logout <provider>",
  needs: "home",
  open: ({ home, io }) => authContext(io, home),
  expected: (error) => (error instanceof AuthStoreError ? 2 : undefined),
  parse: (root, run) => {
    root
      .argument(
        "[provider]",
        "nous, openai-codex, anthropic, copilot, xai-oauth, qwen-oauth or minimax-oauth (default: the active login)",
      )
      .addOption(new Option("--provider <provider>", "same as the argument"))
      .action(
        run((ctx, provider: string | undefined, flags: { provider?: string }) => {
          const named = provider ?? flags.provider;
          const target = named ? oauthProvider(named) : activeLogin(ctx);
          if (!target) {
            throw new CliFailure(
              "no active login to log out of; name one: hermes logout nous|openai-codex|anthropic|copilot|xai-oauth|qwen-oauth|minimax-oauth",
              2,
            );
          }
          return oauthLogout(ctx, target);
        }),
      );
  },
});
