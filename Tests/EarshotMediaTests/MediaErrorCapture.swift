import EarshotMedia

/// The error `body` throws, or nil if it returns.
func mediaError<Result>(_ body: () throws(MediaError) -> Result) -> MediaError? {
    do throws(MediaError) {
        _ = try body()
        return nil
    } catch {
        return error
    }
}
