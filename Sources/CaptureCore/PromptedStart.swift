/// When a pass-thru with an `InitialPrompt` starts recording, and so when it ends, told
/// while the prompt is still spoken (alerts refuse what would talk over the recording
/// until then, and give that time as their try-again time).
///
/// After the prompt's end the session is claimed and the device started, which takes
/// between almost nothing and `allowanceUs`. Were the device started the moment it could
/// be, the recording's end would be known only to within the whole allowance. So it is
/// started no sooner than `delayUs` after the prompt's end: the end told while prompting
/// (from a start at the allowance) is then never early and late by at most
/// `allowanceUs - delayUs`, and what goes unrecorded is the first `delayUs` after the
/// prompt, sooner than anyone answers it.
public enum PromptedStart {
    /// The device starts no sooner than this after the prompt's end.
    public static let delayUs: UInt64 = 50_000
    /// The session's answer and the device's start, at most (assumed).
    public static let allowanceUs: UInt64 = 100_000

    /// When (µs) the device may start, for a prompt ending at `promptEndUs`.
    public static func earliestStartUs(promptEndUs: UInt64) -> UInt64 {
        promptEndUs + delayUs
    }

    /// When (µs) the pass-thru ends by `MaxDuration`, at the latest, for a prompt ending at
    /// `promptEndUs`: its device started at the allowance, its last period read.
    public static func endUs(promptEndUs: UInt64, maxFrames: UInt64, periodFrames: UInt32, rate: UInt32) -> UInt64 {
        CapturePeriod.endUs(startUs: promptEndUs + allowanceUs, maxFrames: maxFrames, periodFrames: periodFrames, rate: rate)
    }
}
