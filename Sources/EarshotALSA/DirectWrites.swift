import CCapturePump

/// A consumer of a `CaptureStream` that, while it needs nothing else of the audio, lets the
/// reading thread write every read straight to file descriptors (pipes), instead of
/// handing each read to `onData`.
///
/// Such a read touches nothing of the consumer's: no callback, no lock, no queue. For a
/// consumer that only forwards the audio (a pipe reader's stream), this is most of what a
/// read costs besides the system calls themselves.
///
/// Both methods are called on the reading thread. The stream asks `directWrites()` after
/// its first read (which goes to `onData`, with its time) and again after every
/// `CaptureStream.redirect()`; before asking again, and before it ends, it reports what
/// went out directly with `directWritesStopped`.
public protocol DirectCaptureConsumer: Sendable {
    /// Where reads go from now on; nil: to `onData`, as usual.
    func directWrites() -> DirectWrites?
    /// Direct writes stopped (asked again, limit reached, a write not taken in full, or the
    /// stream ending): `frames` frames went to every descriptor in full, and `unfinished`
    /// is the read that did not, for the consumer to complete.
    func directWritesStopped(frames: UInt64, unfinished: UnfinishedWrite?)
}

/// Where a stream's reads go directly (see `DirectCaptureConsumer`).
public struct DirectWrites: Sendable {
    /// Non-blocking descriptors each read is written to, in this order. None: reads are
    /// only counted.
    public var descriptors: [Int32]
    /// Frames to write at most: a read beyond is cut short, and direct writes stop there.
    public var framesLeft: UInt64
    /// Counts every frame written (or counted), as it is: a live figure for other threads.
    public var counter: FrameCounter

    public init(descriptors: [Int32], framesLeft: UInt64, counter: FrameCounter) {
        self.descriptors = descriptors
        self.framesLeft = framesLeft
        self.counter = counter
    }
}

/// A read that a descriptor did not take in full: it is full (a pipe whose reader is
/// behind) or failed (a pipe whose reader went away).
public struct UnfinishedWrite: Sendable, Equatable {
    /// The read's bytes (cut short at `framesLeft`).
    public var bytes: [UInt8]
    public var frames: UInt64
    /// The descriptor's index in `DirectWrites.descriptors`: those before it took all of
    /// `bytes`, those after it none.
    public var index: Int
    /// How many of `bytes` it took.
    public var written: Int
    /// The `errno` of its failed write; 0 when it was only full (`EAGAIN`).
    public var error: Int32

    public init(bytes: [UInt8], frames: UInt64, index: Int, written: Int, error: Int32) {
        self.bytes = bytes
        self.frames = frames
        self.index = index
        self.written = written
        self.error = error
    }
}

/// A count of frames, written on one thread and read on any (also by the C writes that
/// write reads directly, hence C atomics rather than Swift's).
public final class FrameCounter: @unchecked Sendable {
    // @unchecked Sendable: `storage` is allocated once, freed in deinit, and only read and
    // written through the atomic C functions.
    let storage: UnsafeMutablePointer<earshot_frame_count>

    public init() {
        storage = .allocate(capacity: 1)
        storage.initialize(to: earshot_frame_count(value: 0))
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    public var value: UInt64 { earshot_frame_count_load(storage) }

    public func set(_ value: UInt64) { earshot_frame_count_store(storage, value) }

    public func add(_ count: UInt64) { earshot_frame_count_add(storage, count) }
}
