/** Skills: parsing, discovery, the prompt index, management, viewing and bundled seeding. */
export { bundledSkillsDir, type SeedResult, seedBundledSkills } from "./bundled.js";
export { skillDirHash } from "./dir-hash.js";
export {
  type DiscoverOptions,
  type DiscoverResult,
  discoverSkills,
  findSkill,
  listLinkedFiles,
  matchesPlatform,
  resolveExternalDirs,
} from "./discovery.js";
export {
  type ParsedSkill,
  type ParseSkillOptions,
  parseSkillMarkdown,
  SkillParseError,
  serializeSkill,
} from "./frontmatter.js";
export {
  createSkill,
  deleteSkill,
  editSkill,
  exactReplace,
  patchSkill,
  type ReplaceResult,
  removeSkillFile,
  type SkillChange,
  type SkillManageContext,
  SkillManageError,
  type TextReplacer,
  writeSkillFile,
} from "./manage.js";
export { skillsRoot } from "./paths.js";
export { renderSkillsIndex, type SkillsIndexOptions } from "./prompt-index.js";
export {
  readBundledManifest,
  readHubInstalls,
  readUsage,
  recordSkillUsage,
  type SkillUsageEvent,
  type SkillUsageRecord,
} from "./provenance.js";
export type * from "./types.js";
export { validateSkillMarkdown } from "./validate.js";
export { type LoadedSkill, loadSkill, loadSkillMessage, readSkillFile, SkillViewError } from "./view.js";
