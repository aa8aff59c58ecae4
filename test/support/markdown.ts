/**
 * Reading Markdown as GitHub shows it: the anchors of a page's headings and its relative links.
 * Used by the checks of README.md and docs/ (test/unit/docs/).
 */
/** Markdown with its fenced code blocks and inline code spans blanked out (links there are text). */
function proseOf(markdown: string): string {
  return markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ' '))
    .replace(/`[^`\n]*`/g, (span) => ' '.repeat(span.length));
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces as hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor of a page's headings; a repeated heading gets `-1`, `-2`… as on GitHub. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = anchorOf(match[1] ?? '');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

export interface Link {
  target: string;
  anchor: string | undefined;
  line: number;
}

/** Every relative link and image of a page (`[text](target#anchor)`), outside code. */
export function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  proseOf(markdown)
    .split('\n')
    .forEach((text, index) => {
      for (const match of text.matchAll(/\]\(<?([^)\s>]*)>?(?:\s+"[^"]*")?\)/g)) {
        const href = match[1] ?? '';
        if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue;
        const hash = href.indexOf('#');
        links.push({
          target: hash < 0 ? href : href.slice(0, hash),
          anchor: hash < 0 ? undefined : decodeURIComponent(href.slice(hash + 1)),
          line: index + 1,
        });
      }
    });
  return links;
}
