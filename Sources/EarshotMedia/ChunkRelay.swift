import EarshotSync
import Glibc

/// Decoded audio passed from the thread that decodes it (and measures its loudness) to the
/// thread that measures its true peak, through a fixed set of chunk buffers, so memory
/// stays bounded whatever the file's length (`bufferCount` × `chunkFrames` frames of
/// float samples: 2 MiB for 8 channels).
///
/// The decoding thread `acquire`s a free buffer, fills it and `publish`es it; from then on
/// both threads read it, each `release`s it when done, and it is free again once both
/// have. The true-peak thread takes published chunks in order with `next` and hands in its
/// outcome with `report`.
final class ChunkRelay: @unchecked Sendable {
    // @unchecked Sendable: `buffers` and `samplesPerFrame` are set in init and never change;
    // every other stored property is read and written only inside `lock.withLock`. The
    // buffers' contents are written only by the decoding thread, and only while it holds a
    // buffer from `acquire` and has not yet published it: `acquire` hands out only buffers
    // no thread reads (on the free list, released by both readers). Both threads read a
    // buffer only between `publish` and their `release` (`cancel` and a failed `report`
    // release, for the true-peak thread, only chunks still queued, which it then can no
    // longer take). Since acquire, publish, next and release all take the lock, the writes
    // happen before the reads, and the reads before the buffer is handed out to be written
    // again.

    /// Frames per chunk.
    static let chunkFrames = 16_384
    /// Chunk buffers: one being decoded into while others wait for the true-peak thread.
    static let bufferCount = 4

    /// A published chunk: which buffer, and how many frames it holds.
    struct Chunk: Sendable {
        let buffer: Int
        let frames: Int
    }

    private let lock = ThreadLock()
    private let buffers: [UnsafeMutableBufferPointer<Float>]
    private let samplesPerFrame: Int
    /// Buffers no thread uses.
    private var free: [Int]
    /// Published chunks the true-peak thread has not taken yet, oldest first.
    private var queued: [Chunk] = []
    /// For each buffer, how many threads still read it.
    private var readers: [Int]
    /// No more chunks will be published.
    private var ended = false
    /// The decoding thread gave up: the true-peak thread should stop without the rest.
    private var cancelled = false
    /// What the true-peak thread reported.
    private var outcome: Result<Double, MediaError>?

    init(channels: Int) {
        samplesPerFrame = channels
        buffers = (0 ..< Self.bufferCount).map { _ in
            .allocate(capacity: Self.chunkFrames * channels)
        }
        free = Array(buffers.indices)
        readers = Array(repeating: 0, count: Self.bufferCount)
    }

    deinit {
        for buffer in buffers { buffer.deallocate() }
    }

    // MARK: The decoding thread

    /// Waits for a free buffer and returns it (its index), or nil once the true-peak thread
    /// has failed (nothing more would be measured).
    func acquire() -> Int? {
        lock.withLock {
            lock.waitLocked { !free.isEmpty || truePeakFailedLocked }
            guard !truePeakFailedLocked else { return nil }
            return free.removeLast()
        }
    }

    /// The whole buffer `index`, to decode into (only between `acquire` and `publish`) or
    /// to read (between `publish` and `release`).
    func buffer(_ index: Int) -> UnsafeMutableBufferPointer<Float> {
        buffers[index]
    }

    /// The first `frames` frames of buffer `index`, to read.
    func samples(_ index: Int, frames: Int) -> UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(rebasing: buffers[index][0 ..< frames * samplesPerFrame])
    }

    /// Hands the first `frames` frames of the acquired buffer `index` to both threads; the
    /// decoding thread must `release` it too.
    func publish(_ index: Int, frames: Int) {
        lock.withLock {
            readers[index] = 2
            queued.append(Chunk(buffer: index, frames: frames))
            lock.broadcastLocked()
        }
    }

    /// Returns an acquired buffer that was not published.
    func giveBack(_ index: Int) {
        lock.withLock {
            free.append(index)
            lock.broadcastLocked()
        }
    }

    /// Says that no more chunks will come: the true-peak thread measures what is queued,
    /// then finishes.
    func end() {
        lock.withLock {
            ended = true
            lock.broadcastLocked()
        }
    }

    /// Says that no more chunks will come and that the queued ones are not wanted.
    func cancel() {
        lock.withLock {
            ended = true
            cancelled = true
            dropQueuedLocked()
            lock.broadcastLocked()
        }
    }

    /// What the true-peak thread reported (nil if it has not).
    var truePeakOutcome: Result<Double, MediaError>? {
        lock.withLock { outcome }
    }

    // MARK: Both threads

    /// Says that the calling thread has finished reading buffer `index`.
    func release(_ index: Int) {
        lock.withLock {
            releaseLocked(index)
            lock.broadcastLocked()
        }
    }

    // MARK: The true-peak thread

    /// Waits for the next published chunk; nil once the chunks have ended (or are not
    /// wanted any more).
    func next() -> Chunk? {
        lock.withLock {
            lock.waitLocked { !queued.isEmpty || ended }
            guard !cancelled, !queued.isEmpty else { return nil }
            return queued.removeFirst()
        }
    }

    /// Hands in the true peak in dBTP, or why it could not be measured; after a failure,
    /// the decoding thread stops at its next `acquire`.
    func report(_ result: Result<Double, MediaError>) {
        lock.withLock {
            outcome = result
            if case .failure = result { dropQueuedLocked() }
            lock.broadcastLocked()
        }
    }

    // MARK: Under the lock

    private var truePeakFailedLocked: Bool {
        if case .failure = outcome { return true }
        return false
    }

    private func releaseLocked(_ index: Int) {
        readers[index] -= 1
        if readers[index] == 0 { free.append(index) }
    }

    /// Releases, for the true-peak thread, the chunks it will not take.
    private func dropQueuedLocked() {
        for chunk in queued { releaseLocked(chunk.buffer) }
        queued.removeAll()
    }
}
