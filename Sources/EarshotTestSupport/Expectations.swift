import EarshotClient
import EarshotDBus
import Testing

/// Expects `body` to throw an error reply named `name`, as the binding gives it (`DBusError`)
/// or as EarshotClient does (`EarshotError`); returns it for further checks.
@discardableResult
public func expectDBusError(_ name: String, sourceLocation: SourceLocation = #_sourceLocation,
                            _ body: () async throws -> Void) async -> DBusError? {
    do {
        try await body()
        Issue.record("expected \(name), but the call succeeded", sourceLocation: sourceLocation)
        return nil
    } catch let error as DBusError {
        #expect(error.name == name, "\(error)", sourceLocation: sourceLocation)
        return error
    } catch let error as EarshotError {
        #expect(error.name == name, "\(error)", sourceLocation: sourceLocation)
        return DBusError(name: error.name, message: error.message)
    } catch {
        Issue.record("expected \(name), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
