//go:build !unix

package server

// watchHost does nothing here: no descriptor is inherited.
func watchHost() {}
