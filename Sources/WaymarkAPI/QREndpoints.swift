import Foundation
import HTTPCore
import HTTPServer
import QRCode

/// `GET /v1/qr?url=…&ecc=L|M|Q|H&format=svg|png&scale=N` (scope `manifest:read`): a QR code
/// for a link on one of the app's universal-link hosts, drawn by our own encoder
/// (`QRCode`), with a four-module quiet zone. Checked on the loop; a code asked before
/// (the same link, level, format and scale) is answered there from `APIContext.qrAnswers`;
/// a new one is encoded in the work queue's reads lane (a version-40 symbol tries eight
/// masks over 31,000 modules), one caller's share at a time.
struct QREndpoints: EndpointGroup {
    let context: APIContext
    /// The longest link taken: more than version 40 holds at level L (2,953 bytes).
    static let maximumURLBytes = 4_096
    /// PNG sides are capped so one request cannot ask for a huge image: at one bit a pixel
    /// a PNG is then at most `maximumPNGBytes`.
    static let maximumPNGPixels = 2_048
    /// The largest PNG answered: a 2,048-pixel side, one bit a pixel, stored deflate.
    static let maximumPNGBytes = 526_444

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.addCachedOrOffLoop("GET", "/v1/qr", .scope(.routesRead, action: "readQR"), maximumBody: 0, lane: .reads) {
            request, _ throws(Refusal) in try qr(request)
        }
    }

    private func qr(_ request: HTTPRequest) throws(Refusal) -> EndpointRegistry.Answer {
        let query = try APIResponse.query(request)
        guard let link = query["url"], !link.isEmpty else { throw Refusal(.badRequest, "missingURL", "Give the link as url=https://…") }
        guard link.utf8.count <= Self.maximumURLBytes else {
            throw Refusal(.badRequest, "badURL", "The link is \(link.utf8.count) bytes; a QR code holds at most 2,953.")
        }
        guard let components = URLComponents(string: link), components.scheme?.lowercased() == "https",
              let host = components.host?.lowercased(), !host.isEmpty, components.user == nil, components.password == nil else {
            throw Refusal(.badRequest, "badURL", "url must be an https link without user information, such as https://storefront.example/sale/spring.")
        }
        let hosts = Set(context.store.snapshot.orderedSchemas.flatMap { $0.schema.hosts })
        guard hosts.contains(host) else {
            throw Refusal(.unprocessableContent, "undeclaredHost",
                          "\(host.prefix(100)) is not one of the app's universal-link hosts (\(hosts.sorted().joined(separator: ", "))); no QR code is drawn for it.")
        }
        let level = try Self.level(query["ecc"])
        let format = query["format"] ?? "svg"
        guard format == "svg" || format == "png" else { throw Refusal(.badRequest, "badFormat", "format is svg or png.") }
        let scale: Int
        if let text = query["scale"] {
            guard let number = Int(text), (1...32).contains(number) else { throw Refusal(.badRequest, "badScale", "scale is 1 to 32 pixels per module.") }
            scale = number
        } else {
            scale = 8
        }
        let key = "\(format) \(level.rawValue) \(scale) \(link)"
        if let kept = context.qrAnswers.cached(key) { return .now(kept) }
        let answers = context.qrAnswers
        return .work { () throws(Refusal) in
            let response = try Self.draw(link, level: level, format: format, scale: scale)
            answers.keep(response, as: key)
            return response
        }
    }

    /// The code for `link`, drawn: the work a cached answer saves.
    static func draw(_ link: String, level: QRCode.ErrorCorrection, format: String, scale: Int) throws(Refusal) -> HTTPResponse {
        let code: QRCode
        do throws(QRCode.EncodingError) {
            code = try QRCode.encode(Array(link.utf8), level: level)
        } catch {
            throw Refusal(.unprocessableContent, "tooLong", error.description + " Choose a lower error-correction level or a shorter link.")
        }
        let side = (code.size + 8) * scale
        // The version, the level, and the bytes that version holds at that level (room left for a longer link).
        let headers: [(String, String)] = [("Cache-Control", "public, max-age=3600"), ("X-QR-Version", String(code.version)),
                                           ("X-QR-Error-Correction", level.rawValue),
                                           ("X-QR-Capacity", String(QRCode.byteCapacity(version: code.version, level: level)))]
        if format == "png" {
            guard side <= maximumPNGPixels else {
                throw Refusal(.badRequest, "badScale", "A \(code.size)-module code at scale \(scale) would be \(side) pixels wide; PNGs are at most \(maximumPNGPixels).")
            }
            return HTTPResponse(status: .ok, headers: HTTPHeaders([("Content-Type", "image/png")] + headers), body: code.png(moduleSize: scale))
        }
        return HTTPResponse(status: .ok, headers: HTTPHeaders([("Content-Type", "image/svg+xml")] + headers),
                            body: Array(code.svg(moduleSize: scale).utf8))
    }

    static func level(_ text: String?) throws(Refusal) -> QRCode.ErrorCorrection {
        guard let text else { return .medium }
        guard let level = QRCode.ErrorCorrection(rawValue: text.uppercased()), text.count == 1 else {
            throw Refusal(.badRequest, "badLevel", "ecc is L, M, Q or H.")
        }
        return level
    }
}
