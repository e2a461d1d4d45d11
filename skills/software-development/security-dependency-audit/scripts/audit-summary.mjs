#!/usr/bin/env node
// Summarise a dependency audit report, worst first: which packages, how severe, direct or
// transitive, the advisories, and whether a fix exists.
// Usage: npm audit --json > /tmp/audit.json; node audit-summary.mjs /tmp/audit.json
//        pip-audit -f json -o /tmp/audit.json; node audit-summary.mjs /tmp/audit.json
// Reads the report file (or stdin with "-") only.
import { readFileSync } from "node:fs";

const file = process.argv[2];
if (!file) {
  console.error("usage: node audit-summary.mjs REPORT.json   (npm audit --json or pip-audit -f json)");
  process.exit(2);
}
let report;
try {
  report = JSON.parse(readFileSync(file === "-" ? 0 : file, "utf8"));
} catch (err) {
  console.error(`audit-summary: cannot read JSON from ${file}: ${err.message}`);
  process.exit(2);
}

const RANK = { critical: 0, high: 1, moderate: 2, medium: 2, low: 3, info: 4, unknown: 5 };
const findings = [];

if (report && typeof report.vulnerabilities === "object" && !Array.isArray(report.vulnerabilities)) {
  // npm audit (npm 7 and later)
  for (const [name, v] of Object.entries(report.vulnerabilities)) {
    const advisories = (v.via ?? [])
      .filter((x) => typeof x === "object")
      .map((x) => `${x.title ?? "advisory"}${x.url ? ` (${x.url})` : ""}`);
    const through = (v.via ?? []).filter((x) => typeof x === "string");
    let fix = "no fix available";
    if (v.fixAvailable === true) fix = "fix: npm audit fix";
    else if (v.fixAvailable && typeof v.fixAvailable === "object") {
      fix = `fix: ${v.fixAvailable.name}@${v.fixAvailable.version}${v.fixAvailable.isSemVerMajor ? " (major upgrade)" : ""}`;
    }
    findings.push({
      name,
      version: v.range ?? "",
      severity: v.severity ?? "unknown",
      direct: v.isDirect === true,
      advisories: advisories.length ? advisories : through.map((t) => `through ${t}`),
      fix,
    });
  }
} else {
  // pip-audit: {"dependencies": [...]} in recent versions, a bare list in older ones.
  const deps = Array.isArray(report) ? report : (report?.dependencies ?? []);
  for (const d of deps) {
    const vulns = d.vulns ?? [];
    if (vulns.length === 0) continue;
    const fixes = [...new Set(vulns.flatMap((v) => v.fix_versions ?? []))];
    findings.push({
      name: d.name,
      version: d.version ?? "",
      severity: "unknown",
      direct: undefined,
      advisories: vulns.map((v) => [v.id, ...(v.aliases ?? [])].filter(Boolean).join(" / ")),
      fix: fixes.length ? `fix: upgrade to ${fixes.join(" or ")}` : "no fix available",
    });
  }
}

if (findings.length === 0) {
  console.log("No known vulnerabilities in this report.");
  process.exit(0);
}
findings.sort((a, b) => (RANK[a.severity] ?? 5) - (RANK[b.severity] ?? 5) || a.name.localeCompare(b.name));
const counts = {};
for (const f of findings) counts[f.severity] = (counts[f.severity] ?? 0) + 1;
console.log(
  `${findings.length} vulnerable package${findings.length === 1 ? "" : "s"}: ` +
    Object.entries(counts)
      .sort((a, b) => (RANK[a[0]] ?? 5) - (RANK[b[0]] ?? 5))
      .map(([s, n]) => `${n} ${s}`)
      .join(", "),
);
for (const f of findings) {
  const where = f.direct === undefined ? "" : f.direct ? ", direct" : ", transitive";
  console.log(`\n[${f.severity}] ${f.name} ${f.version}${where}`);
  for (const a of f.advisories.slice(0, 5)) console.log(`  - ${a}`);
  console.log(`  ${f.fix}`);
}
process.exit(1);
