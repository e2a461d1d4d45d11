/**
 * The several-instance tests' WhatsApp Cloud setup: every instance takes webhooks signed by the
 * fake Cloud API on a loopback port of its own, answers through the fake's Graph API, and lets
 * every user in (the tests are about coordination, not access).
 */
import type { FakeWhatsAppCloud } from "./fake-whatsapp-cloud.js";
import { freePort } from "./free-port.js";
import type { ClusterSetup } from "./gateway-cluster.js";

/**
 * `base` plus the WhatsApp Cloud settings, without API servers unless `base` asks for them;
 * `webhooks[i]` is instance i's webhook URL, filled in as `startCluster` starts it.
 */
export function whatsappClusterSetup(
  wa: FakeWhatsAppCloud,
  base: Omit<ClusterSetup, "env" | "perInstance" | "ready">,
): { setup: ClusterSetup; webhooks: string[] } {
  const webhooks: string[] = [];
  const setup: ClusterSetup = {
    apiServer: false,
    ...base,
    env: {
      WHATSAPP_CLOUD_ACCESS_TOKEN: wa.accessToken,
      WHATSAPP_CLOUD_PHONE_NUMBER_ID: wa.phoneNumberId,
      WHATSAPP_CLOUD_APP_SECRET: wa.appSecret,
      WHATSAPP_CLOUD_VERIFY_TOKEN: "verify-cluster",
      WHATSAPP_CLOUD_GRAPH_URL: wa.url,
      WHATSAPP_CLOUD_ALLOW_ALL_USERS: "true",
    },
    perInstance: async (index) => {
      const port = await freePort();
      webhooks[index] = `http://127.0.0.1:${port}/whatsapp/webhook`;
      return { WHATSAPP_CLOUD_WEBHOOK_PORT: String(port) };
    },
    ready: /^Gateway running.*whatsapp_cloud/,
  };
  return { setup, webhooks };
}
