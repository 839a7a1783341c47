import ContractCore
import EarshotDBus
import Logging

/// Plays an alert's audio: the tone, then the chunks in order.
protocol AlertAudioOutput: Sendable {
    /// Starts playing on threads of its own and returns at once; `ended` is called once,
    /// with warnings about chunks that could not be rendered, when the audio has played
    /// out (not after `stop`). `role` is the `media.role` the audio carries where the
    /// output is PipeWire. The output opens once `ready` has returned. `playedOut` is called
    /// once everything is rendered, before `ended`, with when the last frame will have
    /// played (CLOCK_MONOTONIC, µs; counted from the first frame at the output's rate).
    /// FILE chunks are read from `files` (opened with the caller's rights, by path).
    /// `playedAudio`, a pipe's writing end when the caller gave one (`PlayedAudio`), gets a
    /// stream's WAV header and then every frame handed to the output, and is closed at the
    /// end; `started` hears when the first frame went out (CLOCK_MONOTONIC, µs).
    func play(alert id: UInt64, chunks: [SpeechChunk], files: [String: UnixFD], tone: Bool, role: String,
              playedAudio: UnixFD?, logger: Logger,
              after ready: @escaping @Sendable () async -> Void,
              started: @escaping @Sendable (UInt64) -> Void,
              playedOut: @escaping @Sendable (UInt64) -> Void,
              ended: @escaping @Sendable ([String]) -> Void) -> any AlertPlayback
}

/// One alert's audio while it plays.
protocol AlertPlayback: Sendable {
    /// Stops promptly; `ended` is not called after it.
    func stop()
}

/// Something that follows alerts as they are presented and completed (a display).
protocol AlertObserver: Sendable {
    func presented(_ alert: AlertObject)
    func completed(_ alert: AlertObject)
}
