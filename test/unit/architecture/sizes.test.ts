import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Issue 30, item 4: no file over about 500 lines and no function over about 80, unless it is one
 * algorithm that reads better whole and says so. A src file over {@link MAX_FILE_LINES} lines needs
 * "reads better whole" in its header (the first comment of the file); a function over
 * {@link MAX_FUNCTION_LINES} lines needs it in its leading doc comment. Functions are found with the
 * TypeScript parser: declarations, methods, constructors, accessors, function expressions and arrow
 * functions, except one that is just the body of another counted function (`return new Promise(
 * (resolve) => { ... })`), which is measured as part of that one.
 */
const SRC = resolve(import.meta.dirname, '../../../src');
const MAX_FILE_LINES = 520;
const MAX_FUNCTION_LINES = 80;
const EXCUSE = /reads\s+better\s+whole/i;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

function lineCount(text: string): number {
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

/** The text of every comment right before `pos` (the leading trivia of a node). */
function leadingComments(text: string, pos: number): string {
  return (ts.getLeadingCommentRanges(text, pos) ?? []).map((r) => text.slice(r.pos, r.end)).join('\n');
}

/** The first comment of the file, wherever it is: before the imports or after them. */
export function fileHeader(text: string): string {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.MultiLineCommentTrivia || kind === ts.SyntaxKind.SingleLineCommentTrivia)
      return scanner.getTokenText();
  }
  return '';
}

type FunctionNode = ts.FunctionLikeDeclaration;

function isCounted(node: ts.Node): node is FunctionNode {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node)
  );
}

/** Whether `node` is all that its enclosing function's body does (one statement, or the expression). */
function isJustTheBodyOf(node: FunctionNode, outer: FunctionNode | undefined): boolean {
  if (!outer?.body || !(ts.isFunctionExpression(node) || ts.isArrowFunction(node))) return false;
  if (!ts.isBlock(outer.body)) return true;
  return outer.body.statements.length === 1;
}

/**
 * Where a function's doc comment is: on the function itself, or on the statement, property or
 * variable it is the value of (`export const f = () => ...`, `handler: async () => ...`).
 */
function docAnchor(node: FunctionNode): ts.Node {
  let anchor: ts.Node = node;
  for (;;) {
    const parent: ts.Node = anchor.parent;
    if (
      ts.isVariableDeclaration(parent) ||
      ts.isVariableDeclarationList(parent) ||
      ts.isVariableStatement(parent) ||
      ts.isPropertyAssignment(parent) ||
      ts.isPropertyDeclaration(parent) ||
      ts.isExportAssignment(parent) ||
      ts.isParenthesizedExpression(parent) ||
      ts.isAsExpression(parent) ||
      ts.isSatisfiesExpression(parent)
    ) {
      anchor = parent;
      continue;
    }
    if (ts.isCallExpression(parent) && ts.isExpressionStatement(parent.parent)) return parent.parent;
    return anchor;
  }
}

function functionName(node: FunctionNode, source: ts.SourceFile): string {
  if (node.name) return node.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name)
    return parent.name.getText(source);
  return '(anonymous)';
}

interface Offender {
  where: string;
  lines: number;
}

/** Functions over the limit in one file, without "reads better whole" in their doc comment. */
export function longFunctions(path: string, text: string, max = MAX_FUNCTION_LINES): Offender[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: Offender[] = [];
  const visit = (node: ts.Node, outer: FunctionNode | undefined): void => {
    let enclosing = outer;
    if (isCounted(node) && node.body) {
      if (!isJustTheBodyOf(node, outer)) {
        const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        const lines = end - start + 1;
        if (lines > max && !EXCUSE.test(leadingComments(text, docAnchor(node).getFullStart())))
          found.push({ where: `${path}:${start + 1} ${functionName(node, source)}`, lines });
      }
      enclosing = node;
    }
    ts.forEachChild(node, (child) => visit(child, enclosing));
  };
  visit(source, undefined);
  return found;
}

/** Whether a file is over the limit without "reads better whole" in its header. */
export function longFile(text: string, max = MAX_FILE_LINES): number | null {
  const lines = lineCount(text);
  return lines > max && !EXCUSE.test(fileHeader(text)) ? lines : null;
}

describe('sizes (issue 30, item 4)', () => {
  const files = sourceFiles(SRC).map((file) => ({
    name: relative(resolve(SRC, '..'), file),
    text: readFileSync(file, 'utf8'),
  }));

  it(`no src file is over ${MAX_FILE_LINES} lines without "reads better whole" in its header`, () => {
    const offenders = files.flatMap(({ name, text }) => {
      const lines = longFile(text);
      return lines === null ? [] : [`${name} (${lines} lines)`];
    });
    expect(offenders).toEqual([]);
  });

  it(`no function is over ${MAX_FUNCTION_LINES} lines without "reads better whole" in its doc comment`, () => {
    const offenders = files.flatMap(({ name, text }) =>
      longFunctions(name, text).map((o) => `${o.where} (${o.lines} lines)`),
    );
    expect(offenders).toEqual([]);
    // It parses every src file with the TypeScript compiler: ~2.5 s idle, over 5 s on a loaded machine.
  }, 30_000);

  describe('the checks themselves', () => {
    const body = (n: number): string =>
      Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');

    it('counts a long declaration, method, arrow and function expression, naming each', () => {
      const text = [
        `function a() {\n${body(5)}\n}`,
        `class K {\n  m() {\n${body(5)}\n  }\n  constructor() {\n${body(5)}\n  }\n  get g() {\n${body(5)}\n  }\n}`,
        `const b = () => {\n${body(5)}\n};`,
        `const c = function () {\n${body(5)}\n};`,
        `on('x', async () => {\n${body(5)}\n});`,
      ].join('\n');
      expect(longFunctions('f.ts', text, 5).map((o) => o.where)).toEqual([
        'f.ts:1 a',
        'f.ts:9 m',
        'f.ts:16 constructor',
        'f.ts:23 g',
        'f.ts:31 b',
        'f.ts:38 c',
        'f.ts:45 (anonymous)',
      ]);
    });

    it('measures a function that is just the body of another as part of that one', () => {
      const text = `function outer() {\n  return new Promise((resolve) => {\n${body(5)}\n  });\n}`;
      expect(longFunctions('f.ts', text, 5).map((o) => o.where)).toEqual(['f.ts:1 outer']);
    });

    it('counts a long function nested in a bigger one with other statements', () => {
      const text = `function outer() {\n  const x = 1;\n  const inner = () => {\n${body(5)}\n  };\n}`;
      expect(longFunctions('f.ts', text, 5).map((o) => o.where)).toEqual(['f.ts:1 outer', 'f.ts:3 inner']);
    });

    it('excuses a function whose doc comment says it reads better whole, and no other comment', () => {
      const excused = `/** One algorithm: it reads better whole. */\nexport const f = () => {\n${body(5)}\n};`;
      const inner = `function f() {\n  // reads better whole\n${body(5)}\n}`;
      expect(longFunctions('f.ts', excused, 5)).toEqual([]);
      expect(longFunctions('f.ts', inner, 5).map((o) => o.where)).toEqual(['f.ts:1 f']);
    });

    it('excuses a long file only by its header comment', () => {
      const lines = Array.from({ length: 10 }, (_, i) => `export const v${i} = ${i};`).join('\n');
      expect(longFile(`/** Settings. */\n${lines}\n`, 5)).toBe(11);
      expect(longFile(`/** Settings: a table that reads better whole. */\n${lines}\n`, 5)).toBeNull();
      expect(longFile(`import x from 'y';\n/** It reads better whole. */\n${lines}\n`, 5)).toBeNull();
      expect(longFile(`/** Settings. */\n${lines}\n// reads better whole\n`, 5)).toBe(12);
      expect(longFile(`${lines}\n`, 20)).toBeNull();
    });
  });
});
