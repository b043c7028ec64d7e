# Ruby units per Ruby's own parser (RubyVM::AbstractSyntaxTree), for
# benchmarks/extraction/compare.py.
#
# Classes and modules are classes; `def` is a method when its nearest enclosing unit is a
# class or module (blocks and `class << self` in between do not count) and a function
# otherwise; `def recv.name` is named `recv.name` (`self.name`), as is a `def name` inside
# `class << recv`. Names are qualified by the enclosing units, `::` written as `.`
# (`class ::Foo` is `Foo`). Lines run from the keyword to `end`.
#
#   ruby benchmarks/extraction/oracles/ruby.rb ROOT
require "json"
require "find"

AST = RubyVM::AbstractSyntaxTree

def const_path(node)
  return node.to_s unless node.is_a?(AST::Node)
  case node.type
  when :COLON2
    scope, name = node.children
    scope.nil? ? name.to_s : "#{const_path(scope)}.#{name}"
  when :COLON3
    node.children[0].to_s
  when :CONST
    node.children[0].to_s
  else
    nil
  end
end

# The receiver of `def recv.name` / `class << recv` as written (`self`, a name).
def receiver_text(node)
  return "self" if node.is_a?(AST::Node) && node.type == :SELF
  return node.children[0].to_s if node.is_a?(AST::Node) && %i[LVAR IVAR GVAR CVAR DVAR VCALL CONST].include?(node.type)
  const_path(node) || node.inspect
end

def walk(node, path, prefix, enclosing, out)
  return unless node.is_a?(AST::Node)
  name = kind = nil
  case node.type
  when :CLASS, :MODULE
    name = const_path(node.children[0])
    kind = "class"
  when :DEFN
    name = node.children[0].to_s
    kind = enclosing == "class" ? "method" : "function"
  when :DEFS
    recv = node.children[0]
    name = "#{receiver_text(recv)}.#{node.children[1]}"
    kind = enclosing == "class" ? "method" : "function"
  when :SCLASS
    # `class << self`: not a unit, but its methods are named `self.name`.
    node.children.each do |child|
      walk(child, path, prefix.empty? ? receiver_text(node.children[0]) :
           "#{prefix}.#{receiver_text(node.children[0])}", enclosing, out)
    end
    return
  end
  if name
    qual = prefix.empty? ? name : "#{prefix}.#{name}"
    out << { path: path, name: qual, type: kind,
             start_line: node.first_lineno, end_line: node.last_lineno }
    prefix = qual
    enclosing = kind
  end
  node.children.each { |child| walk(child, path, prefix, enclosing, out) }
end

root = ARGV[0]
files = []
Find.find(root) do |p|
  files << p if File.file?(p) && !File.symlink?(p) && (p.end_with?(".rb") || p.end_with?(".rake"))
end
files.sort.each do |p|
  rel = p.delete_prefix(root).delete_prefix("/")
  begin
    ast = AST.parse(File.binread(p).force_encoding("UTF-8"))
  rescue SyntaxError, StandardError => e
    puts JSON.generate({ unparsable: rel, error: e.message.lines.first.to_s.strip })
    next
  end
  puts JSON.generate({ file: rel })
  out = []
  walk(ast, rel, "", nil, out)
  out.each { |u| puts JSON.generate(u) }
end
