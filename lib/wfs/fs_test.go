package wfs_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wfs"
)

// Each backend must behave like os.File: the blocking pool (the worker
// offers one), a goroutine (outside any runtime), and a FileIO driver.
func backends(t *testing.T) map[string]func(core.Waker) *core.Context {
	pool := &heldPool{auto: true}
	return map[string]func(core.Waker) *core.Context{
		"pool":        on(&poolWorker{worker{pool: pool}}),
		"goroutine":   noRuntime,
		"driver":      on(&worker{driver: newMemDriver()}),
		"driver+pool": on(&poolWorker{worker{driver: newMemDriver(), pool: pool}}),
	}
}

func TestAFileRoundTripsOnEveryBackend(t *testing.T) {
	for name, cx := range backends(t) {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			f := await(t, cx, wfs.Create(path))
			require.NoError(t, f.Err)
			file := f.Value
			assert.Equal(t, path, file.Name())
			w := await(t, cx, file.Write([]byte("hello, world")))
			require.NoError(t, w.Err)
			assert.Equal(t, 12, w.Value)
			require.NoError(t, await(t, cx, file.WriteAt([]byte("W"), 7)).Err)
			require.NoError(t, await(t, cx, file.Sync()).Err)
			fi := await(t, cx, file.Stat())
			require.NoError(t, fi.Err)
			assert.EqualValues(t, 12, fi.Value.Size())

			buf := make([]byte, 5)
			r := await(t, cx, file.ReadAt(buf, 7))
			require.NoError(t, r.Err)
			assert.Equal(t, "World", string(buf[:r.Value]))
			r = await(t, cx, file.ReadAt(make([]byte, 10), 8))
			assert.ErrorIs(t, r.Err, io.EOF, "a ReadAt past the end")
			assert.Equal(t, 4, r.Value)

			require.NoError(t, await(t, cx, file.Close()).Err)
			assert.ErrorIs(t, await(t, cx, file.Close()).Err, os.ErrClosed)
			assert.ErrorIs(t, await(t, cx, file.Read(buf)).Err, os.ErrClosed)
			assert.ErrorIs(t, await(t, cx, file.Write(buf)).Err, os.ErrClosed)

			got := await(t, cx, wfs.ReadFile(path))
			require.NoError(t, got.Err)
			assert.Equal(t, "hello, World", string(got.Value))
		})
	}
}

func TestSequentialReadsAdvanceAndEndWithEOF(t *testing.T) {
	for name, cx := range backends(t) {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			require.NoError(t, os.WriteFile(path, []byte("abcdefgh"), 0o600))
			f := await(t, cx, wfs.Open(path)).Value
			var got []byte
			buf := make([]byte, 5)
			for {
				r := await(t, cx, f.Read(buf))
				got = append(got, buf[:r.Value]...)
				if r.Err != nil {
					assert.ErrorIs(t, r.Err, io.EOF)
					break
				}
			}
			assert.Equal(t, "abcdefgh", string(got))
			await(t, cx, f.Close())
		})
	}
}

func TestWholeFileHelpersRoundTrip(t *testing.T) {
	for name, cx := range backends(t) {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "whole")
			data := bytes.Repeat([]byte("0123456789"), 20_000)
			require.NoError(t, await(t, cx, wfs.WriteFile(path, data, 0o640)).Err)
			got := await(t, cx, wfs.ReadFile(path))
			require.NoError(t, got.Err)
			assert.Equal(t, data, got.Value)
			fi := await(t, cx, wfs.Stat(path))
			require.NoError(t, fi.Err)
			assert.EqualValues(t, len(data), fi.Value.Size())
			require.NoError(t, await(t, cx, wfs.Remove(path)).Err)
			assert.ErrorIs(t, await(t, cx, wfs.Stat(path)).Err, os.ErrNotExist)
			assert.ErrorIs(t, await(t, cx, wfs.ReadFile(path)).Err, os.ErrNotExist)
		})
	}
}

func TestOpeningAMissingFileIsAPathErrorMatchingErrNotExist(t *testing.T) {
	for name, cx := range backends(t) {
		t.Run(name, func(t *testing.T) {
			err := await(t, cx, wfs.Open(filepath.Join(t.TempDir(), "missing"))).Err
			assert.ErrorIs(t, err, os.ErrNotExist)
			var pe *os.PathError
			assert.ErrorAs(t, err, &pe)
		})
	}
}

func TestFileOperationsRunOnTheWorkersBlockingPool(t *testing.T) {
	pool := &heldPool{auto: true}
	cx := on(&poolWorker{worker{pool: pool}})
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, await(t, cx, wfs.WriteFile(path, []byte("x"), 0o600)).Err)
	f := await(t, cx, wfs.Open(path)).Value
	await(t, cx, f.Read(make([]byte, 1)))
	await(t, cx, f.Close())
	assert.Equal(t, 4, pool.count(), "write file, open, read and close each ran on the pool")
}

func TestADriverWithFileIOServesFilesWithoutThePool(t *testing.T) {
	pool := &heldPool{auto: true}
	d := newMemDriver()
	cx := on(&poolWorker{worker{driver: d, pool: pool}})
	path := filepath.Join(t.TempDir(), "f")
	f := await(t, cx, wfs.Create(path)).Value
	// The driver writes at most 3 bytes per call: Write finishes the job.
	require.Equal(t, 10, await(t, cx, f.Write([]byte("0123456789"))).Value)
	await(t, cx, f.Close())
	assert.Zero(t, pool.count(), "nothing went to the pool")
	assert.Zero(t, d.open(), "the driver's handle was closed")
	got, _ := os.ReadFile(path)
	assert.Equal(t, "0123456789", string(got))
}

func TestADroppedPoolReadNeverWritesTheCallersBuffer(t *testing.T) {
	pool := &heldPool{}
	cx := on(&poolWorker{worker{pool: pool}})
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, []byte("secret"), 0o600))
	open := wfs.Open(path)
	_, ok := open.Poll(cx(core.NoopWaker))
	require.False(t, ok)
	pool.release()
	f := await(t, cx, open).Value

	buf := []byte("......")
	read := f.Read(buf)
	_, ok = read.Poll(cx(core.NoopWaker))
	require.False(t, ok, "the read waits for the pool")
	core.Drop(read)
	pool.release() // the read(2) happens now, after the drop
	assert.Equal(t, "......", string(buf), "the dropped read wrote the buffer")
	pool.release()
	close := f.Close()
	close.Poll(cx(core.NoopWaker))
	pool.release()
}

func TestAnOpenDroppedWhileRunningClosesTheFileItOpened(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc/self/fd")
	}
	pool := &heldPool{}
	cx := on(&poolWorker{worker{pool: pool}})
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	before := openFDs(t)
	open := wfs.Open(path)
	_, ok := open.Poll(cx(core.NoopWaker))
	require.False(t, ok)
	core.Drop(open)
	pool.release() // the open(2) completes after the drop
	assert.Equal(t, before, openFDs(t), "the file opened for a dropped Open was not closed")
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents)
}
