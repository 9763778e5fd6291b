import Foundation

/// URLs as people write them, in the one form the cache stores them under.
enum NoteURL {
    /// Parses an http, https or file URL (or an absolute path) and normalizes it.
    ///
    /// - Throws: ``UsageError`` for anything else.
    static func parse(_ text: String) throws -> URL {
        if text.hasPrefix("/") { return URL(filePath: text).standardizedFileURL }
        guard let url = URL(string: text.trimmingCharacters(in: .whitespaces)), let normalized = normalize(url) else {
            throw UsageError(description: "invalid URL '\(text)': use an http, https or file URL")
        }
        return normalized
    }

    /// Scheme and host in lower case, no default port, `.` and `..` resolved, no `#fragment`, and
    /// `/` for an empty path; `nil` for a scheme other than http, https and file.
    static func normalize(_ url: URL) -> URL? {
        guard var components = URLComponents(url: url.absoluteURL, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), ["http", "https", "file"].contains(scheme)
        else { return nil }
        components.scheme = scheme
        components.fragment = nil
        if scheme == "file" {
            return components.url?.standardizedFileURL
        }
        guard let host = components.host, !host.isEmpty else { return nil }
        components.host = host.lowercased()
        if (scheme == "http" && components.port == 80) || (scheme == "https" && components.port == 443) {
            components.port = nil
        }
        if components.percentEncodedPath.isEmpty { components.percentEncodedPath = "/" }
        return components.url?.standardized
    }
}
