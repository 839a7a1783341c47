// How the contract's shared values meet D-Bus: rule violations as named errors, speech lists.
import ContractCore
import EarshotDBus

extension DBusError {
    /// One of Earshot's errors: `.earshot(.invalidData, "MaxDuration: 0 is outside 1..1000000 ms")`.
    public static func earshot(_ error: EarshotErrorName, _ message: String) -> DBusError {
        DBusError(name: error.name, message: message)
    }

    /// A broken contract rule as its named error: `org.earshot.Error.<name>` (or the
    /// standard `InvalidArgs` for a value out of range), `Field: rule`.
    public init(_ violation: RuleViolation) {
        self = violation.error.map { .earshot($0, violation.message) } ?? .invalidArgs(violation.message)
    }

    /// Runs `body`, which reads a request: rule violations become their named errors,
    /// D-Bus errors pass through, anything else is `Failed`.
    public static func readingRequest<Result>(_ body: () throws -> Result) throws(DBusError) -> Result {
        do {
            return try body()
        } catch let violation as RuleViolation {
            throw DBusError(violation)
        } catch let error as DBusError {
            throw error
        } catch {
            throw .failed(String(describing: error))
        }
    }
}

extension DBusValue {
    /// The `(type, text)` pairs of an `a(ss)` speech list; anything else is `InvalidArgs`
    /// naming `field`.
    public func speechPairs(field: String) throws(DBusError) -> [(type: String, text: String)] {
        guard case .array(_, let elements) = self else { throw .invalidArgs("\(field): got \(type), wanted a(ss)") }
        var pairs: [(type: String, text: String)] = []
        for (index, element) in elements.enumerated() {
            guard case .structure(let fields) = element, fields.count == 2,
                  let type = fields[0].stringValue, let text = fields[1].stringValue else {
                throw .invalidArgs("\(field)[\(index)]: got \(element.type), wanted (ss)")
            }
            pairs.append((type, text))
        }
        return pairs
    }
}
