// Java units per the JDK's own parser (com.sun.source tree API), in summarybench's naming.
//
// Run by benchmarks/extraction/compare.py as `java oracles/java.java ROOT` (the JDK's
// source launcher compiles this file in memory on each run; nothing is built in the repo).
// Prints one JSON object a line: a unit {"path","name","type","start_line","end_line"},
// {"file": path} for every file parsed, {"unparsable": path, "error": ...} otherwise.
//
// The conventions (docs/extraction.md, "## Java" and "## Unit names in anonymous/local
// classes") are implemented here independently of the extractor:
// * classes, interfaces, enums, records and annotation types are units of type "class";
//   methods and constructors with a body are units of type "method", wherever their class
//   is (a constructor is named after its class, as in `Foo.Foo`);
// * an anonymous class body is a naming scope `<anonymous Base@L<line of new>>`, an enum
//   constant's body a scope named after the constant; lambdas and initializer blocks
//   qualify nothing;
// * units of one file that would share type and qualified name get the simple types of
//   their parameters appended (`write(JsonWriter,T)`), or, when those do not tell them
//   apart either, `@L<line>` (and `#2`, `#3`, ... for the second, third, ... declared on
//   one line); this is decided level by level, outer names first.
// * a unit starts at its first annotation or modifier (a doc comment is not part of it)
//   and ends on the line of its closing brace.

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.LineMap;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.NewClassTree;
import com.sun.source.tree.Tree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreeScanner;
import com.sun.source.util.Trees;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

public class JavaUnits {

    /** A unit or a naming scope, before names are told apart. */
    static final class Def {
        final int parent;
        String own;
        final String type; // "class", "method", or "scope"
        final int start;
        final int end;
        final String params;

        Def(int parent, String own, String type, int start, int end, String params) {
            this.parent = parent;
            this.own = own;
            this.type = type;
            this.start = start;
            this.end = end;
            this.params = params;
        }
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: java java.java SOURCE_ROOT");
            System.exit(2);
        }
        Path root = Paths.get(args[0]).toAbsolutePath().normalize();
        List<Path> files;
        try (Stream<Path> walk = Files.walk(root)) {
            files = walk.filter(p -> p.toString().endsWith(".java") && Files.isRegularFile(p))
                    .sorted().collect(Collectors.toList());
        }
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        StringBuilder out = new StringBuilder();
        // One task per batch keeps memory flat on large trees; errors are per file anyway.
        int batch = 200;
        for (int i = 0; i < files.size(); i += batch) {
            List<Path> part = files.subList(i, Math.min(files.size(), i + batch));
            DiagnosticCollector<JavaFileObject> diags = new DiagnosticCollector<>();
            StandardJavaFileManager fm = compiler.getStandardFileManager(
                    diags, null, StandardCharsets.UTF_8);
            JavacTask task = (JavacTask) compiler.getTask(null, fm, diags,
                    List.of("-proc:none", "-Xlint:none", "-nowarn"), null,
                    fm.getJavaFileObjectsFromPaths(part));
            // Asked for before parsing, so that the parser keeps end positions.
            SourcePositions positions = Trees.instance(task).getSourcePositions();
            Iterable<? extends CompilationUnitTree> units = task.parse();
            Map<String, String> errors = new HashMap<>();
            for (Diagnostic<? extends JavaFileObject> d : diags.getDiagnostics()) {
                if (d.getKind() == Diagnostic.Kind.ERROR && d.getSource() != null) {
                    errors.putIfAbsent(Paths.get(d.getSource().toUri()).toString(),
                            "line " + d.getLineNumber() + ": " + d.getMessage(null));
                }
            }
            for (CompilationUnitTree cu : units) {
                Path file = Paths.get(cu.getSourceFile().toUri());
                String rel = root.relativize(file).toString().replace('\\', '/');
                String error = errors.get(file.toString());
                if (error != null) {
                    out.append("{\"unparsable\": ").append(json(rel)).append(", \"error\": ")
                            .append(json(error)).append("}\n");
                    continue;
                }
                String src = cu.getSourceFile().getCharContent(true).toString();
                out.append("{\"file\": ").append(json(rel)).append("}\n");
                emit(out, rel, collect(cu, positions, src), cu.getLineMap());
            }
            System.out.print(out);
            out.setLength(0);
        }
        System.out.flush();
    }

    static List<Def> collect(CompilationUnitTree cu, SourcePositions sp, String src) {
        List<Def> defs = new ArrayList<>();
        LineMap lines = cu.getLineMap();
        new TreeScanner<Void, Integer>() {
            int add(Tree tree, Integer parent, String own, String type, String params) {
                int start = (int) sp.getStartPosition(cu, tree);
                int end = (int) sp.getEndPosition(cu, tree);
                defs.add(new Def(parent, own, type, start, end, params));
                return defs.size() - 1;
            }

            @Override
            public Void visitClass(ClassTree node, Integer parent) {
                String name = node.getSimpleName().toString();
                if (name.isEmpty()) { // an anonymous body: its scope was added by its `new`
                    return super.visitClass(node, parent);
                }
                int self = add(node, parent, name, "class", null);
                for (Tree member : node.getMembers()) {
                    if (member instanceof VariableTree && isEnumConstantWithBody(
                            (VariableTree) member)) {
                        VariableTree constant = (VariableTree) member;
                        NewClassTree init = (NewClassTree) constant.getInitializer();
                        int scope = add(init.getClassBody(), self,
                                constant.getName().toString(), "scope", null);
                        scan(init.getClassBody().getMembers(), scope);
                    } else {
                        scan(member, self);
                    }
                }
                return null;
            }

            boolean isEnumConstantWithBody(VariableTree var) {
                // An enum constant's type is implicit: the parser gives it no end position.
                return var.getInitializer() instanceof NewClassTree
                        && ((NewClassTree) var.getInitializer()).getClassBody() != null
                        && sp.getEndPosition(cu, var.getType()) < 0;
            }

            @Override
            public Void visitNewClass(NewClassTree node, Integer parent) {
                if (node.getClassBody() == null) {
                    return super.visitNewClass(node, parent);
                }
                scan(node.getEnclosingExpression(), parent);
                scan(node.getArguments(), parent);
                long line = lines.getLineNumber(sp.getStartPosition(cu, node));
                String own = "<anonymous " + simpleType(node.getIdentifier().toString())
                        + "@L" + line + ">";
                int scope = add(node.getClassBody(), parent, own, "scope", null);
                scan(node.getClassBody().getMembers(), scope);
                return null;
            }

            @Override
            public Void visitMethod(MethodTree node, Integer parent) {
                if (node.getBody() == null) {
                    return super.visitMethod(node, parent);
                }
                String name = node.getName().toString();
                if (name.equals("<init>")) {
                    name = defs.get(parent).own;
                }
                List<String> types = new ArrayList<>();
                for (VariableTree p : node.getParameters()) {
                    long to = sp.getEndPosition(cu, p);
                    if (to < 0) { // a compact record constructor's implicit parameters
                        types.clear();
                        break;
                    }
                    String text = src.substring((int) sp.getStartPosition(cu, p), (int) to);
                    types.add(paramType(text, p.getName().toString()));
                }
                int self = add(node, parent, name, "method",
                        "(" + String.join(",", types) + ")");
                scan(node.getBody(), self);
                return null;
            }
        }.scan(cu, -1);
        return defs;
    }

    /** `java.util.Map.Entry<K, V>` -> `Entry`; array dimensions are kept. */
    static String simpleType(String text) {
        String t = stripGenerics(text.replaceAll("@[\\w.]+(\\s*\\([^)]*\\))?", ""))
                .replaceAll("\\s+", "").replace("...", "[]");
        int dims = t.indexOf('[');
        String base = dims >= 0 ? t.substring(0, dims) : t;
        String suffix = dims >= 0 ? t.substring(dims) : "";
        return base.substring(base.lastIndexOf('.') + 1) + suffix;
    }

    /** A formal parameter's source (`final @A List<T> xs[]`) -> its simple type (`List[]`). */
    static String paramType(String text, String name) {
        String t = text.replaceAll("@[\\w.]+(\\s*\\([^)]*\\))?", " ")
                .replaceAll("\\bfinal\\b", " ").trim();
        String dims = "";
        java.util.regex.Matcher m = java.util.regex.Pattern
                .compile("((\\s*\\[\\s*\\])+)$").matcher(t);
        if (m.find()) {
            dims = m.group(1).replaceAll("\\s+", "");
            t = t.substring(0, m.start()).trim();
        }
        if (t.endsWith(name)) {
            t = t.substring(0, t.length() - name.length());
        }
        return simpleType(t) + dims;
    }

    static String stripGenerics(String text) {
        StringBuilder b = new StringBuilder();
        int depth = 0;
        for (char c : text.toCharArray()) {
            if (c == '<') {
                depth++;
            } else if (c == '>') {
                depth = Math.max(0, depth - 1);
            } else if (depth == 0) {
                b.append(c);
            }
        }
        return b.toString();
    }

    static void emit(StringBuilder out, String path, List<Def> defs, LineMap lines) {
        // Depth first, then level by level: a level's names are final before the next's.
        int[] depth = new int[defs.size()];
        int maxDepth = 0;
        for (int i = 0; i < defs.size(); i++) {
            int parent = defs.get(i).parent;
            depth[i] = parent < 0 ? 0 : depth[parent] + 1;
            maxDepth = Math.max(maxDepth, depth[i]);
        }
        String[] names = new String[defs.size()];
        for (int level = 0; level <= maxDepth; level++) {
            Map<String, List<Integer>> groups = new HashMap<>();
            for (int i = 0; i < defs.size(); i++) {
                if (depth[i] != level) {
                    continue;
                }
                Def d = defs.get(i);
                names[i] = d.parent < 0 ? d.own : names[d.parent] + "." + d.own;
                if (!d.type.equals("scope")) {
                    groups.computeIfAbsent(d.type + " " + names[i], k -> new ArrayList<>())
                            .add(i);
                }
            }
            for (List<Integer> group : groups.values()) {
                if (group.size() < 2) {
                    continue;
                }
                boolean distinct = group.stream().map(i -> defs.get(i).params)
                        .distinct().count() == group.size();
                Map<String, Integer> seen = new HashMap<>();
                for (int i : group) {
                    Def d = defs.get(i);
                    String suffix = distinct ? d.params
                            : "@L" + lines.getLineNumber(d.start);
                    int count = seen.merge(suffix, 1, Integer::sum);
                    names[i] = names[i] + suffix + (count > 1 ? "#" + count : "");
                }
            }
        }
        for (int i = 0; i < defs.size(); i++) {
            Def d = defs.get(i);
            if (d.type.equals("scope")) {
                continue;
            }
            out.append("{\"path\": ").append(json(path))
                    .append(", \"name\": ").append(json(names[i]))
                    .append(", \"type\": ").append(json(d.type))
                    .append(", \"start_line\": ").append(lines.getLineNumber(d.start))
                    .append(", \"end_line\": ").append(lines.getLineNumber(d.end - 1))
                    .append("}\n");
        }
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
