package main

import (
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/session"
	"github.com/weir-sql/weir/udf"
)

// functions returns the Go functions of this build, which CREATE FUNCTION
// binds to SQL names by identifier. A custom build of weir adds its own
// here (udf.Func1, Func2, Func3 wrap a Go function; see package udf).
func functions() *udf.Registry {
	r := udf.NewRegistry()
	countChar := udf.Func2(udf.CountChar)
	const doc = "the number of bytes of s equal to the first byte of c (Nexmark q14)"
	r.MustRegister("count_char", doc, countChar)
	// The reference's Java class name, so that Nexmark's q14 runs as written.
	r.MustRegister("com.github.nexmark.flink.udf.CountChar", doc, countChar)
	return r
}

// newSession returns a session writing to env, with this build's functions.
func newSession(env connector.Env) *session.Session {
	s := session.New(env)
	s.Functions = functions()
	return s
}
