/**
 * Which IP addresses a fetch on the model's behalf (or the skills hub's) must never reach. Pure: no DNS, no sockets.
 */
import { isIP } from "node:net";

function parseIPv4(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const bytes = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : Number.NaN));
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : undefined;
}

/** The eight 16-bit groups of an IPv6 address (zone id ignored), or undefined when malformed. */
function parseIPv6(text: string): number[] | undefined {
  let host = text.replace(/%.*$/, "");
  const groups: number[] = [];
  const tailV4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(host);
  let v4: number[] | undefined;
  if (tailV4?.[1]) {
    v4 = parseIPv4(tailV4[1]);
    if (!v4) return undefined;
    host = host.slice(0, -tailV4[1].length) + "0:0";
  }
  const halves = host.split("::");
  if (halves.length > 2) return undefined;
  const read = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const head = read(halves[0] ?? "");
  const tail = halves.length === 2 ? read(halves[1] ?? "") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  groups.push(...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail);
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff))
    return undefined;
  if (v4) {
    groups[6] = ((v4[0] ?? 0) << 8) | (v4[1] ?? 0);
    groups[7] = ((v4[2] ?? 0) << 8) | (v4[3] ?? 0);
  }
  return groups;
}

function isPrivateIPv4([a = 0, b = 0, c = 0]: number[]): boolean {
  return (
    a === 0 || // "this network", 0.0.0.0
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // CGNAT
    (a === 169 && b === 254) || // link-local, cloud metadata
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && c === 0) || // IETF protocol assignments
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a >= 224 // multicast, reserved, broadcast
  );
}

/**
 * True for addresses a fetch on the model's behalf must not reach: loopback, RFC 1918 private,
 * link-local, CGNAT (100.64/10), unspecified, multicast and reserved ranges, IPv6 unique-local,
 * link-local and site-local, and IPv6 forms that embed such an IPv4 address (IPv4-mapped,
 * IPv4-compatible, NAT64, 6to4). Anything that is not an IP address is reported as private.
 */
export function isPrivateAddress(address: string): boolean {
  const host = address.replace(/^\[|\]$/g, "");
  const kind = isIP(host.replace(/%.*$/, ""));
  if (kind === 4) return isPrivateIPv4(parseIPv4(host) ?? [0]);
  if (kind !== 6) return true;
  const g = parseIPv6(host);
  if (!g) return true;
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embedded = [g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff];
  const prefixZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (prefixZero && g5 === 0 && g6 === 0 && (g7 === 0 || g7 === 1)) return true; // :: and ::1
  if (prefixZero && (g5 === 0xffff || g5 === 0)) return isPrivateIPv4(embedded); // mapped, compatible
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return isPrivateIPv4(embedded); // NAT64
  }
  if (g0 === 0x2002) return isPrivateIPv4([g1 >> 8, g1 & 0xff, g2 >> 8, g2 & 0xff]); // 6to4
  if ((g0 & 0xfe00) === 0xfc00) return true; // unique local fc00::/7
  if ((g0 & 0xffc0) === 0xfe80 || (g0 & 0xffc0) === 0xfec0) return true; // link-local, site-local
  if ((g0 & 0xff00) === 0xff00) return true; // multicast
  return false;
}
