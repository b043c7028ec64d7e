// PHP units per the php-parser npm package (glayzzle), for
// benchmarks/extraction/compare.py.
//
// Named classes, interfaces, traits and enums are classes; a function declaration is a
// function; a method with a body is a method when its nearest enclosing unit is a class
// (an anonymous class counts: it qualifies its methods' names as
// `<anonymous Base@L12>`, Base its base class, else its first interface, else `class`),
// else a function. Namespaces do not qualify names. Lines run from the first attribute
// to the closing brace. Needs php-parser, looked for in ~/.cache/summarybench/oracles (as
// the TypeScript oracle's package), beside this file, in NODE_PATH and npm's global root:
//   npm install --prefix ~/.cache/summarybench/oracles php-parser@3
//
//   node benchmarks/extraction/oracles/php.js ROOT
//   node benchmarks/extraction/oracles/php.js --check   (exit 3 when php-parser is missing)
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { execSync } = require("child_process");

function load(name) {
  const bases = [path.join(os.homedir(), ".cache", "summarybench", "oracles"), __dirname,
    process.cwd(), ...(process.env.NODE_PATH || "").split(":")];
  try {
    bases.push(execSync("npm root -g", { stdio: ["ignore", "pipe", "ignore"] }).toString().trim());
  } catch (e) { /* no npm: the other places only */ }
  for (const base of bases.filter(Boolean)) {
    try {
      return require(require.resolve(name, { paths: [base] }));
    } catch (e) { /* next place */ }
  }
  return null;
}

const parserModule = load("php-parser");
if (process.argv[2] === "--check" || parserModule === null) {
  if (parserModule === null) {
    process.stderr.write("php-parser is not installed. Install with: " +
      "npm install --prefix ~/.cache/summarybench/oracles php-parser@3\n");
    process.exit(3);
  }
  process.exit(0);
}

const engine = new parserModule.Engine({
  parser: { php8: true, extractDoc: false, suppressErrors: false },
  ast: { withPositions: true },
  lexer: { short_tags: true },
});

const CLASSES = new Set(["class", "interface", "trait", "enum"]);

function files(dir, out) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort(
    (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files(full, out);
    else if (entry.isFile() && entry.name.endsWith(".php")) out.push(full);
  }
  return out;
}

function identifier(name) {
  if (name === null || name === undefined) return null;
  return typeof name === "string" ? name : name.name;
}

function walk(node, rel, prefix, enclosing, emit) {
  if (Array.isArray(node)) {
    for (const child of node) walk(child, rel, prefix, enclosing, emit);
    return;
  }
  if (node === null || typeof node !== "object") return;
  let name = null;
  let type = null;
  if (node.kind === "class" && node.isAnonymous && node.loc) {
    const base = node.extends || (node.implements || [])[0];
    const label = base ? identifier(base).split("\\").pop() : "class";
    prefix = `${prefix ? prefix + "." : ""}<anonymous ${label}@L${node.loc.start.line}>`;
    enclosing = "class";
  } else if (CLASSES.has(node.kind) && !node.isAnonymous) {
    name = identifier(node.name);
    type = "class";
  } else if (node.kind === "function" && node.body) {
    name = identifier(node.name);
    type = "function";
  } else if (node.kind === "method" && node.body) {
    name = identifier(node.name);
    type = enclosing === "class" ? "method" : "function";
  }
  if (name !== null && node.loc) {
    const qual = prefix ? `${prefix}.${name}` : name;
    // A class's loc starts at `class`, a method's at its first attribute.
    const starts = [node.loc.start.line, ...(node.attrGroups || []).map((g) => g.loc.start.line)];
    emit({ path: rel, name: qual, type, start_line: Math.min(...starts),
           end_line: node.loc.end.line });
    prefix = qual;
    enclosing = type;
  }
  for (const key of Object.keys(node)) {
    if (key !== "loc" && key !== "leadingComments" && key !== "name") {
      walk(node[key], rel, prefix, enclosing, emit);
    }
  }
}

const root = process.argv[2];
const lines = [];
const emit = (record) => lines.push(JSON.stringify(record));
for (const full of files(root, [])) {
  const rel = path.relative(root, full).split(path.sep).join("/");
  let ast;
  try {
    ast = engine.parseCode(fs.readFileSync(full, "utf8"), rel);
  } catch (err) {
    emit({ unparsable: rel, error: String(err.message || err).split("\n")[0] });
    continue;
  }
  emit({ file: rel });
  walk(ast.children, rel, "", null, emit);
  if (lines.length > 10000) process.stdout.write(lines.splice(0).join("\n") + "\n");
}
process.stdout.write(lines.join("\n") + "\n");
