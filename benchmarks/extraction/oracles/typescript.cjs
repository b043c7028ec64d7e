// TypeScript (and, through javascript.cjs, JavaScript) units per the `typescript` npm
// package's own parser (ts.createSourceFile), in summarybench's naming.
//
// Run by benchmarks/extraction/compare.py as `node oracles/typescript.cjs ROOT`. Needs the
// `typescript` package, looked for in $SUMMARYBENCH_TYPESCRIPT (a directory holding
// node_modules/typescript), then in ~/.cache/summarybench/oracles, then where node finds
// packages. Install it once (nothing is downloaded at test time):
//     npm install --prefix ~/.cache/summarybench/oracles typescript@5
// Prints one JSON object a line: a unit {"path","name","type","start_line","end_line"},
// {"file": path} for every file parsed, {"unparsable": path, "error": ...} otherwise.
//
// The conventions (docs/extraction.md, "## TypeScript and JavaScript", "## Unit names in
// anonymous/local classes", "## Wrapped function values") are implemented here
// independently of the extractor:
// * function declarations are functions; classes, class expressions, interfaces and enums
//   are classes; methods, accessors and constructors with a body are methods in a class
//   (or a named object literal), functions in an object literal nothing names;
// * an arrow function, function expression or class expression is a unit when something
//   names it: a variable, a class field, an object key, an assignment to a name or a
//   member (`a.b = ...`, the name is `a.b`), `export default` (`default`); parentheses,
//   `as`, `satisfies`, `!` and `<T>` around it change nothing;
// * an object literal bound to a variable is a naming scope (its functions are methods),
//   and so is a class expression nothing names: `<anonymous Base@L<line>>`;
// * units of one file that would share type and qualified name get their parameters
//   appended (types where they are plain names, else names), or `@L<line>` when those do
//   not tell them apart (and `#2`, `#3`, ... for the second, third, ... on one line);
//   level by level, outer names first;
// * a unit starts at its first decorator or modifier, or at the statement that names it
//   (`export const f = ...`), and ends where the function or class ends.
"use strict";

const fs = require("fs");
const os = require("os");
const path = require("path");

const INSTALL = "npm install --prefix ~/.cache/summarybench/oracles typescript@5";

function loadTypeScript() {
  const places = [];
  if (process.env.SUMMARYBENCH_TYPESCRIPT) {
    places.push(path.join(process.env.SUMMARYBENCH_TYPESCRIPT, "node_modules", "typescript"));
  }
  places.push(path.join(os.homedir(), ".cache", "summarybench", "oracles", "node_modules",
    "typescript"));
  places.push("typescript");
  for (const place of places) {
    try {
      return require(place);
    } catch (err) {
      if (err.code !== "MODULE_NOT_FOUND") throw err;
    }
  }
  process.stderr.write(`the typescript package is missing: ${INSTALL}\n`);
  process.exit(3);
}

const EXTENSIONS = {
  typescript: [".ts", ".mts", ".cts", ".tsx"],
  javascript: [".js", ".mjs", ".cjs", ".jsx"],
};

function walk(dir, exts, out) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort(
    (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== ".git") walk(full, exts, out);
    } else if (entry.isFile() && exts.some((e) => entry.name.toLowerCase().endsWith(e))) {
      out.push(full);
    }
  }
  return out;
}

function unquote(text) {
  return text.trim().replace(/^['"`]+/, "").replace(/['"`]+$/, "");
}

function stripGenerics(text) {
  let depth = 0;
  let out = "";
  for (const c of text) {
    if (c === "<") depth++;
    else if (c === ">") depth = Math.max(0, depth - 1);
    else if (depth === 0) out += c;
  }
  return out;
}

function main(language) {
  const ts = loadTypeScript();
  const root = path.resolve(process.argv[process.argv.length - 1]);
  const K = ts.SyntaxKind;
  const WRAPPERS = new Set([K.ParenthesizedExpression, K.AsExpression, K.SatisfiesExpression,
    K.NonNullExpression, K.TypeAssertionExpression]);
  const out = [];

  function scriptKind(file) {
    const lower = file.toLowerCase();
    if (lower.endsWith(".tsx")) return ts.ScriptKind.TSX;
    if (lower.endsWith(".jsx")) return ts.ScriptKind.JSX;
    if (language === "javascript") return ts.ScriptKind.JS;
    return ts.ScriptKind.TS;
  }

  for (const file of walk(root, EXTENSIONS[language], [])) {
    const rel = path.relative(root, file).split(path.sep).join("/");
    const text = fs.readFileSync(file, "utf8");
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file));
    if (sf.parseDiagnostics && sf.parseDiagnostics.length) {
      const d = sf.parseDiagnostics[0];
      const line = sf.getLineAndCharacterOfPosition(d.start).line + 1;
      out.push(JSON.stringify({ unparsable: rel,
        error: `line ${line}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}` }));
      continue;
    }
    out.push(JSON.stringify({ file: rel }));
    emit(rel, collect(sf));
    if (out.length > 2000) flush();
  }
  flush();

  function flush() {
    if (out.length) process.stdout.write(out.join("\n") + "\n");
    out.length = 0;
  }

  function collect(sf) {
    const defs = [];
    const lineOf = (pos) => sf.getLineAndCharacterOfPosition(pos).line + 1;

    function add(parent, own, type, startNode, endNode, params) {
      defs.push({ parent, own, type, start: lineOf(startNode.getStart(sf)),
        end: lineOf(endNode.end), params });
      return defs.length - 1;
    }

    function enclosingType(parent) {
      return parent < 0 ? null : defs[parent].type;
    }

    function unwrap(node) {
      let top = node;
      while (top.parent && WRAPPERS.has(top.parent.kind)) top = top.parent;
      return [top, top.parent];
    }

    function inner(node) {
      let n = node;
      while (WRAPPERS.has(n.kind)) n = n.expression;
      return n;
    }

    function paramToken(p) {
      if (p.type) {
        const t = stripGenerics(p.type.getText(sf)).replace(/\s+/g, "");
        if (/^[A-Za-z_$][\w$.]*(\[\])*$/.test(t)) {
          const bracket = t.indexOf("[");
          const base = bracket >= 0 ? t.slice(0, bracket) : t;
          return base.slice(base.lastIndexOf(".") + 1) + (bracket >= 0 ? t.slice(bracket) : "");
        }
      }
      if (p.name.kind === K.ObjectBindingPattern) return "{}";
      if (p.name.kind === K.ArrayBindingPattern) return "[]";
      return p.name.getText(sf);
    }

    function params(fn) {
      return "(" + fn.parameters.map(paramToken).join(",") + ")";
    }

    // The name a value's context gives it, the node the unit starts at, and the context.
    function bound(node) {
      const [top, ctx] = unwrap(node);
      if (!ctx) return null;
      switch (ctx.kind) {
        case K.VariableDeclaration:
          if (ctx.initializer !== top || ctx.name.kind !== K.Identifier) return null;
          return { name: ctx.name.text, start: ctx.parent.declarations.length === 1
            && ctx.parent.parent.kind === K.VariableStatement ? ctx.parent.parent : ctx, ctx };
        case K.PropertyDeclaration:
          if (ctx.initializer !== top) return null;
          return { name: ctx.name.getText(sf), start: ctx, ctx };
        case K.PropertyAssignment:
          if (ctx.initializer !== top) return null;
          return { name: unquote(ctx.name.getText(sf)), start: node, ctx };
        case K.BinaryExpression:
          if (ctx.operatorToken.kind !== K.EqualsToken || ctx.right !== top) return null;
          if (ctx.left.kind !== K.Identifier && ctx.left.kind !== K.PropertyAccessExpression) {
            return null;
          }
          return { name: ctx.left.getText(sf).split(/\s+/).join(" "),
            start: ctx.parent.kind === K.ExpressionStatement ? ctx.parent : ctx, ctx };
        case K.ExportAssignment:
          if (ctx.isExportEquals || ctx.expression !== top) return null;
          return { name: "default", start: ctx, ctx };
        default:
          return null;
      }
    }

    function isDefault(node) {
      return (ts.getModifiers ? ts.getModifiers(node) || [] : node.modifiers || [])
        .some((m) => m.kind === K.DefaultKeyword);
    }

    function isScopeObject(decl) {
      if (decl.name.kind !== K.Identifier || !decl.initializer) return false;
      const init = decl.initializer;
      if (init.kind === K.ObjectLiteralExpression) return true;
      if (language === "javascript") {
        return init.kind === K.ParenthesizedExpression
          && init.expression.kind === K.ObjectLiteralExpression;
      }
      return (init.kind === K.ParenthesizedExpression || init.kind === K.AsExpression
        || init.kind === K.SatisfiesExpression)
        && inner(init).kind === K.ObjectLiteralExpression;
    }

    function visit(node, parent) {
      let self = parent;
      switch (node.kind) {
        case K.FunctionDeclaration:
          if (node.body) {
            const own = node.name ? node.name.text : isDefault(node) ? "default" : null;
            if (own !== null) self = add(parent, own, "function", node, node, params(node));
          }
          break;
        case K.ClassDeclaration:
        case K.InterfaceDeclaration:
        case K.EnumDeclaration: {
          const own = node.name ? node.name.text : isDefault(node) ? "default" : null;
          if (own !== null) self = add(parent, own, "class", node, node, null);
          break;
        }
        case K.ClassExpression: {
          const b = bound(node);
          if (b) self = add(parent, b.name, "class", b.start, node, null);
          else if (node.name) self = add(parent, node.name.text, "class", node, node, null);
          else {
            let base = "class";
            for (const clause of node.heritageClauses || []) {
              if (clause.token !== K.ExtendsKeyword || !clause.types.length) continue;
              const e = clause.types[0].expression;
              if (e.kind === K.Identifier || e.kind === K.PropertyAccessExpression) {
                const t = e.getText(sf);
                base = t.slice(t.lastIndexOf(".") + 1);
              }
            }
            self = add(parent, `<anonymous ${base}@L${lineOf(node.getStart(sf))}>`, "scope",
              node, node, null);
          }
          break;
        }
        case K.MethodDeclaration:
        case K.Constructor:
        case K.GetAccessor:
        case K.SetAccessor:
          if (node.body) {
            const own = node.kind === K.Constructor ? "constructor" : node.name.getText(sf);
            const et = enclosingType(parent);
            const type = et === "class" || et === "scope" ? "method" : "function";
            self = add(parent, own, type, node, node, params(node));
          }
          break;
        case K.ArrowFunction:
        case K.FunctionExpression: {
          const b = bound(node);
          if (b) {
            const et = enclosingType(parent);
            let type = "function";
            if (b.ctx.kind === K.PropertyDeclaration) {
              type = et === "class" || et === "scope" ? "method" : "function";
            } else if (b.ctx.kind === K.PropertyAssignment) {
              type = et === "scope" ? "method" : "function";
            }
            self = add(parent, b.name, type, b.start, node, params(node));
          }
          break;
        }
        case K.VariableDeclaration:
          if (isScopeObject(node)) {
            const scope = add(parent, node.name.text, "scope", node.initializer,
              node.initializer, null);
            ts.forEachChild(node, (child) => visit(child, child === node.initializer
              ? scope : parent));
            return;
          }
          break;
        default:
          break;
      }
      ts.forEachChild(node, (child) => visit(child, self));
    }

    visit(sf, -1);
    return defs;
  }

  function emit(rel, defs) {
    const depth = defs.map(() => 0);
    defs.forEach((d, i) => { depth[i] = d.parent < 0 ? 0 : depth[d.parent] + 1; });
    const names = [];
    const maxDepth = Math.max(-1, ...depth);
    for (let level = 0; level <= maxDepth; level++) {
      const groups = new Map();
      defs.forEach((d, i) => {
        if (depth[i] !== level) return;
        names[i] = d.parent < 0 ? d.own : `${names[d.parent]}.${d.own}`;
        if (d.type === "scope") return;
        const key = `${d.type} ${names[i]}`;
        if (!groups.has(key)) groups.set(key, []);
        groups.get(key).push(i);
      });
      for (const group of groups.values()) {
        if (group.length < 2) continue;
        const ps = group.map((i) => defs[i].params);
        const distinct = !ps.includes(null) && new Set(ps).size === ps.length;
        const seen = new Map();
        for (const i of group) {
          const suffix = distinct ? defs[i].params : `@L${defs[i].start}`;
          const count = (seen.get(suffix) || 0) + 1;
          seen.set(suffix, count);
          names[i] += count > 1 ? `${suffix}#${count}` : suffix;
        }
      }
    }
    defs.forEach((d, i) => {
      if (d.type === "scope") return;
      out.push(JSON.stringify({ path: rel, name: names[i], type: d.type,
        start_line: d.start, end_line: d.end }));
    });
  }
}

module.exports = { main };

if (require.main === module) main("typescript");
