import Glibc

/// A short synthesized sound: notes with a bell-like timbre and envelope, rendered to mono
/// signed 16-bit samples at any rate.
public struct Motif: Sendable, Equatable {
    /// One note of a motif.
    public struct Note: Sendable, Equatable {
        /// Pitch in Hz.
        public var frequency: Double
        /// When the note starts, in seconds from the motif's start.
        public var start: Double
        /// How long it sounds, in seconds (its envelope ends at `start + duration`).
        public var duration: Double
        /// Relative loudness, 0...1.
        public var level: Double

        public init(frequency: Double, start: Double, duration: Double, level: Double = 1) {
            self.frequency = frequency
            self.start = start
            self.duration = duration
            self.level = level
        }
    }

    public var notes: [Note]
    /// The loudest sample, as a fraction of full scale, after rendering.
    public var peak: Double

    public init(notes: [Note], peak: Double = 0.5) {
        self.notes = notes
        self.peak = peak
    }

    /// Length in seconds: until the last note ends.
    public var duration: Double {
        notes.map { $0.start + $0.duration }.max() ?? 0
    }

    /// Renders the motif at `sampleRate` Hz: each note is a sine with a softer second and
    /// third harmonic, a 5 ms attack, an exponential decay and a 15 ms release to zero;
    /// overlapping notes add up, and the sum is scaled so its loudest sample is `peak`.
    public func render(sampleRate: Int) -> [Int16] {
        precondition(sampleRate > 0, "sample rate must be positive")
        let rate = Double(sampleRate)
        let frameCount = Int((duration * rate).rounded(.up))
        var mix = [Double](repeating: 0, count: frameCount)
        for note in notes {
            let first = Int((note.start * rate).rounded())
            let length = Int((note.duration * rate).rounded())
            let attack = max(1, 0.005 * rate)
            let release = max(1, min(0.015 * rate, Double(length) / 2))
            // Decays to about 1/e over the note's length.
            let decay = 1 / max(1, Double(length))
            let step = 2 * Double.pi * note.frequency / rate
            for offset in 0 ..< length where first + offset < frameCount {
                let position = Double(offset)
                var envelope = exp(-position * decay)
                if position < attack { envelope *= position / attack }
                let remaining = Double(length - offset)
                if remaining < release { envelope *= remaining / release }
                let phase = step * position
                let wave = sin(phase) + 0.35 * sin(2 * phase) + 0.12 * sin(3 * phase)
                mix[first + offset] += note.level * envelope * wave
            }
        }
        let loudest = mix.reduce(0) { max($0, abs($1)) }
        guard loudest > 0 else { return [Int16](repeating: 0, count: frameCount) }
        let scale = peak * Double(Int16.max) / loudest
        return mix.map { Int16(($0 * scale).rounded()) }
    }
}
