/// The four formats of the contract.
public enum MediaFormat: String, Sendable, CaseIterable {
    case wave, oggVorbis, flac, aacM4A
}
