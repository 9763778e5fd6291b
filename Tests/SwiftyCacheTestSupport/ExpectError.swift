public import SwiftyCacheCore
public import Testing

/// Expects `body` to throw a `CacheError` with `code`.
public func expectError<T>(
    _ code: CacheError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) {
    do {
        _ = try body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as CacheError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected CacheError \(code), got \(error)", sourceLocation: sourceLocation)
    }
}
