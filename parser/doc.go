// Package parser turns Weir's SQL (the Flink SQL dialect) into the AST of
// ast.go and renders it back.
//
// Parse reads a script of statements separated by ';', ParseExpr a single
// expression, Format renders any node as canonical SQL, and SplitStatements
// cuts shell input at statement boundaries. Syntax errors are *Error values
// naming line and column, showing the line with a caret, and listing what
// was expected.
//
// The grammar is written with participle (grammar.go) and converted into
// the AST (convert.go); the grammar structs never leave this package.
package parser
