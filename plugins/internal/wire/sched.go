package wire

// Scheduler policy session records.
//
// A host → plugin frame is a run of requests, each a length-prefixed byte
// string (so requests queued together stay apart) holding a batch of task
// events and the number of decisions wanted:
//
//	seq uvarint, max uvarint, events...
//
// and each event is
//
//	kind u8, task uvarint, then by kind:
//	  EventSpawned    priority varint, name string
//	  EventWoken      priority varint
//	  EventPolled     nothing
//	  EventCompleted  nothing
//
// The plugin answers every request, in order, with
//
//	seq uvarint, n uvarint, n task ids uvarint
//
// (the answers to the requests of one frame travel in one frame)
// the tasks the host should run next, first first (n <= max).
const (
	EventSpawned byte = iota + 1
	EventWoken
	EventPolled
	EventCompleted
)

// MaxDecision is the largest max a request may ask for; a larger one is
// a malformed request.
const MaxDecision = 1 << 16
