/**
 * Whether a model endpoint runs on this machine or the local network: a refused connection there
 * means the user's own server is not running (fail fast, say how to start it), while a refused
 * connection to a remote host may be a blip worth retrying.
 */

/** Private, loopback and link-local IPv4 ranges. */
function privateIPv4(host: string): boolean {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return false;
  const [a, b] = [Number(m[1]), Number(m[2])];
  return (
    a === 127 ||
    a === 10 ||
    a === 0 ||
    (a === 192 && b === 168) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 169 && b === 254) ||
    (a === 100 && b >= 64 && b <= 127) // carrier-grade NAT, also Tailscale
  );
}

/**
 * True for `localhost` (and `*.localhost`), loopback, private and link-local addresses (IPv4 and
 * IPv6, including IPv4-mapped), mDNS `*.local`, `*.lan`, `*.internal`, `host.docker.internal`,
 * and single-label host names (`ollama`, a Docker Compose service). False for anything else and
 * for text that is not a URL.
 */
export function isLocalOrLanUrl(url: string | undefined): boolean {
  if (!url) return false;
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  host = host.replace(/^\[|\]$/g, "");
  if (host === "") return false;
  if (host.includes(":")) {
    // WHATWG URL writes IPv4-mapped addresses in hex: [::ffff:127.0.0.1] → ::ffff:7f00:1.
    const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
    if (mapped?.[1] && mapped[2]) {
      const [hi, lo] = [Number.parseInt(mapped[1], 16), Number.parseInt(mapped[2], 16)];
      return privateIPv4(`${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`);
    }
    return (
      host === "::1" || host === "::" || /^f[cd][0-9a-f]{2}:/.test(host) || /^fe[89ab][0-9a-f]:/.test(host)
    );
  }
  if (/^[\d.]+$/.test(host)) return privateIPv4(host);
  return (
    host === "localhost" || !host.includes(".") || /\.(localhost|local|lan|internal|home\.arpa)$/.test(host)
  );
}
