/** The skills toolset: skills_list, skill_view, skill_manage. */
import type { AnyTool } from "../registry.js";
import { skillManageTool } from "./skill-manage.js";
import { skillViewTool } from "./skill-view.js";
import { skillsListTool } from "./skills-list.js";

export { skillManageTool } from "./skill-manage.js";
export { skillViewTool } from "./skill-view.js";
export { SKILLS_PAGE_SIZE, skillsListTool } from "./skills-list.js";

export const skillTools: readonly AnyTool[] = [skillsListTool, skillViewTool, skillManageTool];
