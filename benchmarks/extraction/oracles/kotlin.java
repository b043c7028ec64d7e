// Kotlin units per the Kotlin compiler's own parser (its PSI), for
// benchmarks/extraction/compare.py.
//
// Named classes, interfaces and objects are classes (companion objects are transparent:
// their functions are the outer class's methods); a function with a body is a method when
// its nearest enclosing unit is a class, else a function. An object expression
// (`object : Base() { ... }`) and an enum entry with a body qualify their functions'
// names, as `<anonymous Base@L12>` (`Any` without a supertype) and as the entry's name,
// and those functions are methods. A unit starts at its first annotation or modifier (a
// KDoc comment is left out) and ends at its last character. Files with syntax errors are
// reported as unparsable. Needs the compiler's jars (npm's kotlin-compiler package):
//
//   npm install --prefix ~/.cache/summarybench/oracles kotlin-compiler@2.4.20
//   KT=~/.cache/summarybench/oracles/node_modules/kotlin-compiler/lib
//   java -cp $KT/kotlin-compiler.jar:$KT/kotlin-stdlib.jar \
//       benchmarks/extraction/oracles/kotlin.java ROOT
import com.intellij.openapi.util.Disposer;
import com.intellij.psi.PsiComment;
import com.intellij.psi.PsiElement;
import com.intellij.psi.PsiErrorElement;
import com.intellij.psi.PsiWhiteSpace;
import com.intellij.psi.util.PsiTreeUtil;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jetbrains.kotlin.cli.FrontendConfigurationKeysKt;
import org.jetbrains.kotlin.cli.common.CLIConfigurationKeys;
import org.jetbrains.kotlin.cli.common.messages.MessageCollector;
import org.jetbrains.kotlin.cli.jvm.compiler.EnvironmentConfigFiles;
import org.jetbrains.kotlin.cli.jvm.compiler.KotlinCoreEnvironment;
import org.jetbrains.kotlin.compiler.plugin.CompilerPluginRegistrar;
import org.jetbrains.kotlin.config.CompilerConfiguration;
import org.jetbrains.kotlin.kdoc.psi.api.KDoc;
import org.jetbrains.kotlin.psi.KtClassOrObject;
import org.jetbrains.kotlin.psi.KtEnumEntry;
import org.jetbrains.kotlin.psi.KtFile;
import org.jetbrains.kotlin.psi.KtNamedFunction;
import org.jetbrains.kotlin.psi.KtObjectDeclaration;
import org.jetbrains.kotlin.psi.KtPsiFactory;
import org.jetbrains.kotlin.psi.KtSuperTypeListEntry;

public class kotlin {
    static StringBuilder out = new StringBuilder();
    static String text;
    static int[] lineStarts;

    static int line(int offset) {
        int lo = 0, hi = lineStarts.length - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (lineStarts[mid] <= offset) lo = mid; else hi = mid - 1;
        }
        return lo + 1;
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static void emit(String path, String name, String type, PsiElement node) {
        int start = node.getTextRange().getStartOffset();
        for (PsiElement child = node.getFirstChild(); child != null; child = child.getNextSibling()) {
            if (child instanceof KDoc || child instanceof PsiComment || child instanceof PsiWhiteSpace) continue;
            start = child.getTextRange().getStartOffset();
            break;
        }
        int end = node.getTextRange().getEndOffset();
        out.append("{\"path\":").append(json(path)).append(",\"name\":").append(json(name))
            .append(",\"type\":").append(json(type)).append(",\"start_line\":").append(line(start))
            .append(",\"end_line\":").append(line(Math.max(start, end - 1))).append("}\n");
    }

    static String simpleType(String t) {
        StringBuilder b = new StringBuilder();
        int depth = 0;
        for (char c : t.toCharArray()) {
            if (c == '<') depth++;
            else if (c == '>') depth--;
            else if (depth == 0) b.append(c);
        }
        String s = b.toString().replaceAll("\\(.*", "").trim();
        s = s.substring(s.lastIndexOf('.') + 1);
        return s.isEmpty() ? "Any" : s;
    }

    static void walk(PsiElement node, String path, String prefix, String enclosing) {
        for (PsiElement child = node.getFirstChild(); child != null; child = child.getNextSibling()) {
            String p = prefix, e = enclosing;
            if (child instanceof KtEnumEntry) {
                KtEnumEntry entry = (KtEnumEntry) child;
                if (entry.getBody() != null) {
                    p = (prefix.isEmpty() ? "" : prefix + ".") + entry.getName();
                    e = "class";
                }
            } else if (child instanceof KtObjectDeclaration && ((KtObjectDeclaration) child).isObjectLiteral()) {
                KtObjectDeclaration obj = (KtObjectDeclaration) child;
                List<KtSuperTypeListEntry> supers = obj.getSuperTypeListEntries();
                String base = supers.isEmpty() || supers.get(0).getTypeReference() == null ? "Any"
                    : simpleType(supers.get(0).getTypeReference().getText());
                p = (prefix.isEmpty() ? "" : prefix + ".") + "<anonymous " + base + "@L"
                    + line(obj.getTextRange().getStartOffset()) + ">";
                e = "class";
            } else if (child instanceof KtObjectDeclaration && ((KtObjectDeclaration) child).isCompanion()) {
                // transparent
            } else if (child instanceof KtClassOrObject && ((KtClassOrObject) child).getName() != null) {
                p = (prefix.isEmpty() ? "" : prefix + ".") + ((KtClassOrObject) child).getName();
                e = "class";
                emit(path, p, "class", child);
            } else if (child instanceof KtNamedFunction && ((KtNamedFunction) child).hasBody()
                       && ((KtNamedFunction) child).getName() != null) {
                String kind = "class".equals(enclosing) ? "method" : "function";
                p = (prefix.isEmpty() ? "" : prefix + ".") + ((KtNamedFunction) child).getName();
                e = kind;
                emit(path, p, kind, child);
            }
            walk(child, path, p, e);
        }
    }

    public static void main(String[] args) throws IOException {
        Path root = Paths.get(args[0]).toAbsolutePath();
        CompilerConfiguration config = new CompilerConfiguration();
        config.put(CLIConfigurationKeys.MESSAGE_COLLECTOR_KEY, MessageCollector.Companion.getNONE());
        FrontendConfigurationKeysKt.setExtensionsStorage(config, new CompilerPluginRegistrar.ExtensionStorage());
        KotlinCoreEnvironment env = KotlinCoreEnvironment.createForProduction(
            Disposer.newDisposable(), config, EnvironmentConfigFiles.JVM_CONFIG_FILES);
        KtPsiFactory factory = new KtPsiFactory(env.getProject(), false);
        List<Path> files;
        try (Stream<Path> walk = Files.walk(root)) {
            files = walk.filter(f -> Files.isRegularFile(f, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                                && (f.toString().endsWith(".kt") || f.toString().endsWith(".kts")))
                .sorted().collect(Collectors.toList());
        }
        for (Path f : files) {
            String rel = root.relativize(f).toString().replace('\\', '/');
            text = new String(Files.readAllBytes(f), StandardCharsets.UTF_8).replace("\r\n", "\n");
            int n = 1;
            for (int i = 0; i < text.length(); i++) if (text.charAt(i) == '\n') n++;
            lineStarts = new int[n];
            for (int i = 0, k = 1; i < text.length(); i++) if (text.charAt(i) == '\n') lineStarts[k++] = i + 1;
            KtFile file = factory.createFile(f.getFileName().toString(), text);
            PsiErrorElement error = PsiTreeUtil.findChildOfType(file, PsiErrorElement.class);
            if (error != null) {
                out.append("{\"unparsable\":").append(json(rel)).append(",\"error\":")
                    .append(json("line " + line(error.getTextRange().getStartOffset()) + ": "
                                 + error.getErrorDescription())).append("}\n");
                continue;
            }
            out.append("{\"file\":").append(json(rel)).append("}\n");
            walk(file, rel, "", "");
            if (out.length() > 1 << 20) { System.out.print(out); out.setLength(0); }
        }
        System.out.print(out);
        System.out.flush();
        System.exit(0);
    }
}
