// Go units per go/parser, for benchmarks/extraction/compare.py.
//
// A unit is a function or method declaration with a body, or a struct or interface type
// (type aliases are not units). Methods are named Receiver.Method, the receiver's base
// type without pointer or type parameters; a type declared inside a function is named
// after it (Func.T, Recv.Method.T). A declaration starts at its keyword, the doc comment
// left out; a type alone in its `type` declaration starts at `type`, one in a grouped
// `type ( ... )` at its own name.
//
//	go run benchmarks/extraction/oracles/go.go ROOT
package main

import (
	"bufio"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type unit struct {
	Path      string `json:"path"`
	Name      string `json:"name"`
	Type      string `json:"type"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
}

func receiverBase(expr ast.Expr) string {
	for {
		switch e := expr.(type) {
		case *ast.StarExpr:
			expr = e.X
		case *ast.ParenExpr:
			expr = e.X
		case *ast.IndexExpr:
			expr = e.X
		case *ast.IndexListExpr:
			expr = e.X
		case *ast.Ident:
			return e.Name
		default:
			return ""
		}
	}
}

type walker struct {
	fset  *token.FileSet
	path  string
	out   *json.Encoder
	scope []string
}

func (w *walker) emit(name, kind string, start, end token.Pos) {
	if len(w.scope) > 0 {
		name = strings.Join(w.scope, ".") + "." + name
	}
	_ = w.out.Encode(unit{w.path, name, kind, w.fset.Position(start).Line, w.fset.Position(end).Line})
}

func (w *walker) types(decl *ast.GenDecl) {
	if decl.Tok != token.TYPE {
		return
	}
	for _, spec := range decl.Specs {
		ts := spec.(*ast.TypeSpec)
		if ts.Assign.IsValid() {
			continue
		}
		switch ts.Type.(type) {
		case *ast.StructType, *ast.InterfaceType:
		default:
			continue
		}
		start := ts.Pos()
		if !decl.Lparen.IsValid() {
			start = decl.Pos()
		}
		w.emit(ts.Name.Name, "class", start, ts.End())
	}
}

// Local type declarations, anywhere in a function body (function literals included).
func (w *walker) body(body *ast.BlockStmt) {
	ast.Inspect(body, func(n ast.Node) bool {
		if ds, ok := n.(*ast.DeclStmt); ok {
			if gd, ok := ds.Decl.(*ast.GenDecl); ok {
				w.types(gd)
			}
		}
		return true
	})
}

func main() {
	root := os.Args[1]
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	var paths []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	for _, p := range paths {
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			_ = enc.Encode(map[string]string{"unparsable": rel, "error": err.Error()})
			continue
		}
		_ = enc.Encode(map[string]string{"file": rel})
		w := &walker{fset: fset, path: rel, out: enc}
		for _, decl := range file.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				w.types(d)
			case *ast.FuncDecl:
				if d.Body == nil {
					continue
				}
				name, kind := d.Name.Name, "function"
				if d.Recv != nil && len(d.Recv.List) > 0 {
					kind = "method"
					if base := receiverBase(d.Recv.List[0].Type); base != "" {
						name = base + "." + name
					}
				}
				w.emit(name, kind, d.Pos(), d.End())
				w.scope = []string{name}
				w.body(d.Body)
				w.scope = nil
			}
		}
	}
}
