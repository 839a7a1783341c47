import ContractCore
import EarshotContract
import EarshotDBus

extension EarshotError {
    /// What kind of error a reply is: one of Earshot's own (`EarshotErrorName`, the names
    /// the contract declares), a standard D-Bus error the contract or any call may give,
    /// or `.other`.
    public enum Code: Sendable, Equatable, Hashable, CaseIterable {
        case earshot(EarshotErrorName)
        // The D-Bus standard errors the contract uses.
        case invalidArgs, accessDenied, limitsExceeded
        // What any call may meet besides: the service failed, is not on the bus, or did not answer.
        case failed, serviceMissing, noReply, other

        public static var allCases: [Code] {
            EarshotErrorName.allCases.map(Code.earshot) + [.invalidArgs, .accessDenied, .limitsExceeded, .failed, .serviceMissing,
                                                           .noReply, .other]
        }

        /// The error name on the wire; nil for `.serviceMissing` (two names) and `.other`.
        public var errorName: String? {
            switch self {
            case .earshot(let name): name.name
            case .invalidArgs: DBusError.prefix + "InvalidArgs"
            case .accessDenied: DBusError.prefix + "AccessDenied"
            case .limitsExceeded: DBusError.prefix + "LimitsExceeded"
            case .failed: DBusError.prefix + "Failed"
            case .noReply: DBusError.prefix + "NoReply"
            case .serviceMissing, .other: nil
            }
        }

        /// The code of an error name.
        public init(errorName name: String) {
            if name == DBusError.prefix + "ServiceUnknown" || name == DBusError.prefix + "NameHasNoOwner" {
                self = .serviceMissing
            } else if let earshot = EarshotErrorName(name: name) {
                self = .earshot(earshot)
            } else {
                self = Self.standard[name] ?? .other
            }
        }

        private static let standard: [String: Code] = Dictionary(
            uniqueKeysWithValues: [Code.invalidArgs, .accessDenied, .limitsExceeded, .failed, .noReply].compactMap { code in
                code.errorName.map { ($0, code) }
            })
    }

    /// What kind of error this is, for a `switch`.
    public var code: Code { Code(errorName: name) }

    /// SmartDeviceLink's result code for a refusal of this kind, as a pass-thru or alert
    /// would report it; nil for errors SDL has no code for.
    public var resultCode: ResultCode? {
        switch code {
        case .earshot(.rejected): .rejected
        case .earshot(.invalidData): .invalidData
        case .earshot(.disallowed): .disallowed
        case .earshot(.unsupportedResource): .unsupportedResource
        case .earshot(.fileNotFound): .fileNotFound
        case .earshot(.genericError): .genericError
        default: nil
        }
    }
}
