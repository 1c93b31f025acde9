import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import GithubSlugger from "github-slugger";
import { describe, expect, it } from "vitest";

// A reader follows the README's and the guides' links: every relative link must reach a file of
// the repository, and every `#anchor` a heading of the page it names (as the forges slug them).
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The Markdown pages people are pointed to: the README, CONTRIBUTING, docs/ and the packages' and SDKs' own. */
function pages(): string[] {
  const found = ["README.md", "CONTRIBUTING.md", "deploy/k8s/README.md"];
  for (const name of readdirSync(join(ROOT, "docs"))) if (name.endsWith(".md")) found.push(`docs/${name}`);
  for (const parent of ["packages", "examples", "services", "sdks"]) {
    for (const name of readdirSync(join(ROOT, parent))) {
      const readme = `${parent}/${name}/README.md`;
      if (existsSync(join(ROOT, readme))) found.push(readme);
    }
  }
  return found;
}

/** Markdown outside fenced code blocks (a link in a shell sample is not a link). */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, "");
}

/** Every `[text](target)` of a page whose target is in the repository (not a URL, not mail). */
function links(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] as string)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** The anchors a page's headings get on the forges. */
function anchors(markdown: string): Set<string> {
  const slugger = new GithubSlugger();
  const headings = [...prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)].map(
    (match) => match[1] as string,
  );
  return new Set(headings.map((heading) => slugger.slug(heading)));
}

describe("links in the README and the docs", () => {
  const all = pages();

  it("finds the pages", () => {
    expect(all).toContain("docs/architecture.md");
    expect(all.length).toBeGreaterThan(15);
  });

  it.each(all)("every link of %s resolves", (page) => {
    const markdown = readFileSync(join(ROOT, page), "utf8");
    const broken: string[] = [];
    for (const link of links(markdown)) {
      const [path = "", anchor] = link.split("#", 2);
      const target = path === "" ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), decodeURI(path));
      if (!target.startsWith(ROOT) || !existsSync(target)) {
        broken.push(`${link}: no such file`);
        continue;
      }
      if (anchor === undefined || !target.endsWith(".md") || statSync(target).isDirectory()) continue;
      if (!anchors(readFileSync(target, "utf8")).has(anchor)) {
        broken.push(`${link}: no heading #${anchor} in ${relative(ROOT, target)}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
