import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What fetching one URL gave.
enum FetchOutcome: Sendable {
    /// A new or changed page.
    case fetched(Page)
    /// The server answered 304 (or the file is unchanged): the cached copy stands.
    case notModified
}

/// A fetch that failed, with a message fit for one line on stderr.
struct FetchError: Error, CustomStringConvertible {
    var description: String
}

/// Fetches pages over http(s) with conditional requests, and file URLs from disk.
struct Fetcher: Sendable {
    let session: URLSession

    init(timeout: TimeInterval = 20) {
        let configuration = URLSessionConfiguration.ephemeral
        // Our cache is the cache: no URLCache underneath that would hide 304s from us.
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout * 3
        session = URLSession(configuration: configuration)
    }

    /// Fetches `url`; with a `cached` copy, asks the server whether it changed.
    func fetch(_ url: URL, cached: Page?, now: Date) async throws -> FetchOutcome {
        if url.isFileURL { return try fetchFile(url, cached: cached, now: now) }
        var request = URLRequest(url: url)
        request.setValue("text/html, text/*;q=0.9, */*;q=0.1", forHTTPHeaderField: "Accept")
        if let etag = cached?.etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        if let lastModified = cached?.lastModified {
            request.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since")
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch let error as URLError {
            throw FetchError(
                description: "cannot reach \(url.host ?? url.absoluteString): \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else {
            throw FetchError(description: "\(url.absoluteString): not an HTTP response")
        }
        if http.statusCode == 304 {
            guard cached != nil else {
                throw FetchError(description: "\(url.absoluteString): unexpected 304 with no cached copy")
            }
            return .notModified
        }
        guard (200..<300).contains(http.statusCode) else {
            let reason = HTTPURLResponse.localizedString(forStatusCode: http.statusCode).capitalized
            throw FetchError(description: "\(url.absoluteString): HTTP \(http.statusCode) \(reason)")
        }
        let contentType = http.value(forHTTPHeaderField: "Content-Type") ?? "text/html"
        guard Self.isText(contentType), let body = String(data: data, encoding: .utf8) else {
            throw FetchError(description: "\(url.absoluteString): not a text page (content type \(contentType))")
        }
        return .fetched(
            Page(
                url: url, title: HTMLText.title(of: body) ?? url.lastPathComponent, body: body,
                contentType: contentType, etag: http.value(forHTTPHeaderField: "ETag"),
                lastModified: http.value(forHTTPHeaderField: "Last-Modified"), fetchedAt: now))
    }

    private func fetchFile(_ url: URL, cached: Page?, now: Date) throws -> FetchOutcome {
        let path = url.path(percentEncoded: false)
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw FetchError(description: "\(path): no such file")
        }
        // The modification date plays the part of Last-Modified.
        let modified = (attributes[.modificationDate] as? Date).map { String($0.timeIntervalSince1970) }
        if let cached, let modified, cached.lastModified == modified { return .notModified }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FetchError(description: "\(path): cannot be read")
        }
        let type =
            ["html": "text/html", "htm": "text/html", "md": "text/markdown", "txt": "text/plain"][
                url.pathExtension.lowercased()] ?? "text/plain"
        guard let body = String(data: data, encoding: .utf8), !data.contains(0) else {
            throw FetchError(description: "\(path): not a text file")
        }
        return .fetched(
            Page(
                url: url, title: HTMLText.title(of: body) ?? url.lastPathComponent, body: body, contentType: type,
                etag: nil, lastModified: modified, fetchedAt: now))
    }

    static func isText(_ contentType: String) -> Bool {
        let type =
            contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return type.hasPrefix("text/")
            || ["application/xhtml+xml", "application/xml", "application/json"].contains(type)
    }
}
