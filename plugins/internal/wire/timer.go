package wire

// Timer session records.
//
// The host's clock is the only clock: the plugin never reads a clock of its
// own. It keeps a mirror (a virtual clock) that the host moves forward with
// every instant it sends, and builds its timer on that mirror, so a timer
// that reads its clock (a wheel's start tick) sees the host's time.
//
// A host → plugin frame is a run of records, each a code byte then its
// operands:
//
//	TimerSync    now varint                 move the mirror clock to now
//	TimerInsert  id uvarint, deadline varint arm entry id (a new id per arming)
//	TimerCancel  id uvarint                 disarm entry id, if armed
//	TimerFire    seq uvarint, now varint    move the mirror to now, fire what
//	                                        is due, and reply TimerFired
//
// The first frame of a session starts with TimerSync; the plugin builds its
// timer from the factory after applying it and answers TimerHello.
//
// A plugin → host frame is a run of replies:
//
//	TimerHello   resolution uvarint (nanoseconds; 0: none)
//	TimerFired   seq uvarint, n uvarint, n ids uvarint,
//	             has u8, next varint (the timer's NextDeadline when has = 1)
//
// Replies to TimerFire come in the order of the requests, and each one
// reflects every record the host sent before its request.
const (
	TimerSync byte = iota + 1
	TimerInsert
	TimerCancel
	TimerFire
)

// Timer replies.
const (
	TimerHello byte = iota + 1
	TimerFired
)
