/**
 * The dashboard page's shell: takes the token from the URL, draws the nav from the page registry,
 * routes by hash, keeps the theme (system, light, dark), and moves focus to a page's heading when
 * the page changes so keyboard and screen-reader users land where the content is.
 */
import { Component, type ComponentChildren, render } from "preact";
import { useEffect, useLayoutEffect, useState } from "preact/hooks";
import { adoptTokenFromUrl } from "./api.js";
import { Toasts } from "./components/toast.js";
import { ErrorNote } from "./components/ui.js";
import { pages } from "./pages/index.js";
import { href, useRoute } from "./router.js";

type Theme = "system" | "light" | "dark";
const THEME_KEY = "hermes-dashboard-theme";

function storedTheme(): Theme {
  const value = localStorage.getItem(THEME_KEY);
  return value === "light" || value === "dark" ? value : "system";
}

function applyTheme(theme: Theme): void {
  if (theme === "system") delete document.documentElement.dataset["theme"];
  else document.documentElement.dataset["theme"] = theme;
}

class PageBoundary extends Component<{ children: ComponentChildren; page: string }, { error: Error | null }> {
  override state = { error: null as Error | null };
  override componentDidCatch(error: unknown): void {
    this.setState({ error: error instanceof Error ? error : new Error(String(error)) });
  }
  override componentDidUpdate(previous: { page: string }): void {
    if (previous.page !== this.props.page && this.state.error) this.setState({ error: null });
  }
  override render() {
    return this.state.error ? (
      <ErrorNote error={`This page failed: ${this.state.error.message}`} />
    ) : (
      this.props.children
    );
  }
}

function ThemeSwitch() {
  const [theme, setThemeState] = useState<Theme>(storedTheme);
  const setTheme = (next: Theme) => {
    applyTheme(next);
    if (next === "system") localStorage.removeItem(THEME_KEY);
    else localStorage.setItem(THEME_KEY, next);
    setThemeState(next);
  };
  return (
    <label class="theme-switch">
      <span class="sr-only">Theme</span>
      <select
        value={theme}
        onChange={(e) => setTheme((e.currentTarget as HTMLSelectElement).value as Theme)}
        aria-label="Theme"
      >
        <option value="system">System theme</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  );
}

function App() {
  const route = useRoute();
  const page = pages.find((p) => p.id === route.page) ?? (route.page === "" ? pages[0] : undefined);
  useEffect(() => {
    document.title = page ? `${page.title} · Hermes` : "Hermes dashboard";
  }, [page]);
  // Right after the new page is in the DOM, not a frame later: a late move would take focus from
  // wherever the keyboard has gone since.
  useLayoutEffect(() => {
    // A new page (not a new query on the same page) moves focus to its heading.
    const heading = document.getElementById("page-title");
    if (heading && document.activeElement === document.body) heading.focus({ preventScroll: true });
  }, [page?.id]);
  const Page = page?.component;
  return (
    <div class="shell">
      {/* The hash is the router's, so skipping is a button that moves focus itself. */}
      <button type="button" class="skip-link btn" onClick={() => document.getElementById("main")?.focus()}>
        Skip to content
      </button>
      <header class="topbar">
        <a class="brand" href={href(pages[0]?.id ?? "")}>
          ☤ Hermes
        </a>
        <nav class="nav" aria-label="Pages">
          {pages.map((p) => (
            <a
              key={p.id}
              href={href(p.id)}
              class={p === page ? "active" : ""}
              aria-current={p === page ? "page" : undefined}
            >
              {p.title}
            </a>
          ))}
        </nav>
        <ThemeSwitch />
      </header>
      <main id="main" tabIndex={-1}>
        {Page ? (
          <PageBoundary page={page.id}>
            <Page route={route} />
          </PageBoundary>
        ) : (
          <ErrorNote error={`No page called "${route.page}".`} />
        )}
      </main>
      <footer class="footer muted">Hermes-TS {__HERMES_VERSION__} · JSON API under /api/</footer>
      <Toasts />
    </div>
  );
}

adoptTokenFromUrl();
applyTheme(storedTheme());
const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
