package config

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/knadh/koanf/parsers/json"
	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
)

// FileError is a configuration file that could not be used: missing,
// unreadable, of an unsupported format, or malformed. Loading stops at it.
type FileError struct {
	Path    string // the path as given
	Problem string // what is wrong, including the parser's message
	Err     error  // the underlying cause, if any
}

func (e *FileError) Error() string {
	return fmt.Sprintf("weft: config file %q: %s", e.Path, e.Problem)
}

// Unwrap returns the underlying cause, so errors.Is(err, fs.ErrNotExist)
// holds for a missing file.
func (e *FileError) Unwrap() error { return e.Err }

// parsers maps a file extension to the parser of its format.
var parsers = map[string]func() koanf.Parser{
	".yaml": func() koanf.Parser { return yaml.Parser() },
	".yml":  func() koanf.Parser { return yaml.Parser() },
	".toml": func() koanf.Parser { return toml.Parser() },
	".json": func() koanf.Parser { return json.Parser() },
}

// readFile reads and parses the configuration file at path, choosing the
// format by its extension.
func readFile(path string) (map[string]any, error) {
	ext := strings.ToLower(filepath.Ext(path))
	newParser, ok := parsers[ext]
	if !ok {
		problem := fmt.Sprintf("unsupported file extension %q", ext)
		if ext == "" {
			problem = "no file extension to tell the format by"
		}
		return nil, &FileError{Path: path, Problem: problem + " (valid: .json, .toml, .yaml, .yml)"}
	}
	b, err := file.Provider(path).ReadBytes()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &FileError{Path: path, Problem: "no such file", Err: err}
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, &FileError{Path: path, Problem: pe.Err.Error(), Err: err}
		}
		return nil, &FileError{Path: path, Problem: err.Error(), Err: err}
	}
	m, err := newParser().Unmarshal(b)
	if err != nil {
		return nil, &FileError{Path: path, Problem: "malformed " + strings.TrimPrefix(ext, ".") +
			": " + parseMessage(b, err), Err: err}
	}
	if m == nil {
		m = map[string]any{} // an empty file
	}
	return m, nil
}

// parseMessage returns a parser's error message with the line and column
// added when the parser knows them but does not say them.
func parseMessage(b []byte, err error) string {
	var pos interface{ Position() (row, column int) } // go-toml
	if errors.As(err, &pos) {
		row, col := pos.Position()
		return fmt.Sprintf("line %d, column %d: %v", row, col, err)
	}
	var syn *stdjson.SyntaxError
	if errors.As(err, &syn) {
		before := b[:min(int(syn.Offset), len(b))]
		line := bytes.Count(before, []byte("\n")) + 1
		col := len(before) - (bytes.LastIndexByte(before, '\n') + 1)
		return fmt.Sprintf("line %d, column %d: %v", line, col, err)
	}
	return err.Error()
}
