/// The names of the request fields the domain cores check and name in their messages, spelled
/// once: the contract declares each of these keys by its case here (`OptionKey(.title, …)`),
/// and a core refusing a value names its field by the case (`RuleViolation(…, field: .title, …)`).
/// Every other key and property name is spelled once in EarshotContract.
public enum EarshotField: String, Sendable, CaseIterable {
    // Capture's PerformAudioPassThru.
    case samplingRate = "SamplingRate"
    case bitsPerSample = "BitsPerSample"
    case audioType = "AudioType"
    case initialPrompt = "InitialPrompt"
    case outputPath = "OutputPath"
    case delivery = "Delivery"
    case chunkMs = "ChunkMs"
    case noiseSuppression = "NoiseSuppression"
    case bargeIn = "BargeIn"
    case echoCancel = "EchoCancel"

    // Alerts' PresentAlert.
    case text = "Text"
    case secondaryText = "SecondaryText"
    case tertiaryText = "TertiaryText"
    case icon = "Icon"
    case timeout = "Timeout"
    case softButtons = "SoftButtons"
    /// A soft button's image (`SoftButtons[i].Image`).
    case image = "Image"

    // Pieces' Drop and List.
    case title = "Title"
    case description = "Description"
    case lengthMicroseconds = "LengthMicroseconds"
    case tempo = "Tempo"
    case loopStartMicroseconds = "LoopStartMicroseconds"
    case loopEndMicroseconds = "LoopEndMicroseconds"
    case timeSignatureUpper = "TimeSignatureUpper"
    case basedOn = "BasedOn"
    case tonality = "Tonality"
    case scale = "Scale"
    case root = "Root"
    case attachmentMimeType = "AttachmentMimeType"
    case mixStem = "MixStem"
    case preview = "Preview"
    case coverImage = "CoverImage"
    case attachment = "Attachment"
    case tempoMin = "TempoMin"
    case tempoMax = "TempoMax"
    case limit = "Limit"

    // Session's desired state.
    case category = "Category"
    case mode = "Mode"
    case options = "Options"
    case sampleRate = "SampleRate"
    case ioBufferDuration = "IOBufferDuration"
    case preferredInput = "PreferredInput"
    case dataSourceName = "DataSourceName"
    case inputOrientation = "InputOrientation"
    case polarPattern = "PolarPattern"

    /// The name on the bus.
    public var name: String { rawValue }
}
