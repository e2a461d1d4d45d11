/** What a page gives the shell: its route id, nav title, place in the nav, and component. */
import type { JSX } from "preact";
import type { Route } from "../router.js";

export interface PageDef {
  /** The first hash segment: `#/sessions`. */
  id: string;
  /** Nav label and document title. */
  title: string;
  /** Position in the nav (lower first). */
  order: number;
  component: (props: { route: Route }) => JSX.Element;
}
