/// One `AudioPassThru` signal's worth of PCM.
public struct AudioChunk: Sendable, Equatable {
    public let data: [UInt8]
    public let sequence: UInt64
    /// CLOCK_MONOTONIC µs when the chunk's last frame was read.
    public let monotonicUs: UInt64
}

/// Cuts captured PCM into chunks of exactly `chunkMs` of audio.
///
/// Chunk n ends at frame ⌊(n+1)·rate·chunkMs/1000⌋, so rates whose chunk is not a whole
/// number of frames (22050 Hz × 10 ms) alternate sizes and never drift.
public struct Chunker: Sendable {
    public let sampleRate: UInt32
    public let chunkMs: UInt32
    public let bytesPerFrame: Int
    private var pending: [UInt8] = []
    private var pendingStart: UInt64 = 0
    public private(set) var sequence: UInt64 = 0

    public init(sampleRate: UInt32, chunkMs: UInt32, bytesPerFrame: Int) {
        precondition(sampleRate > 0 && chunkMs > 0 && bytesPerFrame > 0)
        self.sampleRate = sampleRate
        self.chunkMs = chunkMs
        self.bytesPerFrame = bytesPerFrame
    }

    /// The frame at which chunk `n` ends.
    public func endFrame(ofChunk n: UInt64) -> UInt64 {
        (n + 1) * UInt64(sampleRate) * UInt64(chunkMs) / 1000
    }

    /// Adds whole frames read at `monotonicUs`; returns the chunks they complete.
    public mutating func append(_ bytes: ArraySlice<UInt8>, monotonicUs: UInt64) -> [AudioChunk] {
        var chunks: [AudioChunk] = []
        append(bytes, monotonicUs: monotonicUs) { chunks.append($0) }
        return chunks
    }

    /// Adds whole frames read at `monotonicUs`, handing each chunk they complete to `emit`,
    /// in order. A read of exactly the next chunk (reads ask for chunk-sized periods) is
    /// that chunk as it is: no copy and no allocation.
    public mutating func append(_ bytes: [UInt8], monotonicUs: UInt64, _ emit: (AudioChunk) -> Void) {
        if pending.isEmpty, bytes.count == nextChunkBytes {
            emitNext(bytes, monotonicUs: monotonicUs, emit)
        } else {
            append(bytes[...], monotonicUs: monotonicUs, emit)
        }
    }

    /// `append(_:monotonicUs:_:)` for part of a read.
    public mutating func append(_ bytes: ArraySlice<UInt8>, monotonicUs: UInt64, _ emit: (AudioChunk) -> Void) {
        if pending.isEmpty, bytes.count == nextChunkBytes {
            emitNext(Array(bytes), monotonicUs: monotonicUs, emit)
            return
        }
        pending.append(contentsOf: bytes)
        var start = 0
        while pending.count - start >= nextChunkBytes {
            let end = start + nextChunkBytes
            emitNext(Array(pending[start..<end]), monotonicUs: monotonicUs, emit)
            start = end
        }
        pending.removeFirst(start)
    }

    /// Whether frames wait for the rest of their chunk.
    public var hasPending: Bool { !pending.isEmpty }

    /// The bytes from `pendingStart` to the end of chunk `sequence`.
    private var nextChunkBytes: Int { Int(endFrame(ofChunk: sequence) - pendingStart) * bytesPerFrame }

    private mutating func emitNext(_ data: [UInt8], monotonicUs: UInt64, _ emit: (AudioChunk) -> Void) {
        emit(AudioChunk(data: data, sequence: sequence, monotonicUs: monotonicUs))
        pendingStart = endFrame(ofChunk: sequence)
        sequence += 1
    }

    /// The short last chunk, if frames are left over.
    public mutating func flush(monotonicUs: UInt64) -> AudioChunk? {
        guard !pending.isEmpty else { return nil }
        defer {
            pending.removeAll()
            sequence += 1
        }
        return AudioChunk(data: pending, sequence: sequence, monotonicUs: monotonicUs)
    }
}
