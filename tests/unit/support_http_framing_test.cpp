// The tests' and benches' HTTP/1.1 framer (tests/support/http_framing.hpp): what every peer, the
// raw client and the benches frame with, checked on its own. Bodies by Content-Length, by chunks
// (with extensions and a trailer) and by the end of the stream; bytes arriving in any pieces; a
// malformed or oversized message refused with a reason; the writers read back.
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "http_framing.hpp"

namespace rendezvous::testing {
namespace {

using Result = HttpReader::Result;

// Every message in `stream`, read in one piece; the reader's last result after them.
std::vector<HttpMessage> ReadAll(HttpKind kind, std::string stream, Result* last = nullptr) {
  HttpReader reader(kind);
  std::vector<HttpMessage> out;
  Result r;
  for (int i = 0; i < 100 && (r = reader.Read(stream)) == Result::kMessage; ++i) out.push_back(reader.Take());
  if (last) *last = r;
  return out;
}

// The framing error a request (or answer) gets, kNone when it reads as a whole message.
HttpFramingError ErrorOf(const std::string& text, HttpKind kind = HttpKind::kRequest,
                         HttpLimits limits = {}) {
  HttpReader reader(kind, limits);
  std::string in = text;
  const Result r = reader.Read(in);
  if (r == Result::kError) {
    EXPECT_FALSE(reader.reason().empty());
    EXPECT_EQ(reader.Read(in), Result::kError) << "an error ends the stream";
    return reader.error();
  }
  EXPECT_EQ(r, Result::kMessage) << text;
  return HttpFramingError::kNone;
}

TEST(SupportHttpFraming, ReadsAChunkedBodyWithExtensionsAndATrailer) {
  std::string in =
      "POST /hook?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;name=value\r\nhello\r\n6 ; quoted=\"a;b\"\r\n world\r\nA\r\n, and more\r\n0;last\r\n"
      "X-Checksum: 17\r\n\r\nGET /next HTTP/1.1\r\n";
  HttpReader reader(HttpKind::kRequest);
  ASSERT_EQ(reader.Read(in), Result::kMessage) << reader.reason();
  const HttpMessage m = reader.Take();
  EXPECT_EQ(m.method, "POST");
  EXPECT_EQ(m.target, "/hook?x=1");
  EXPECT_EQ(m.version, "HTTP/1.1");
  EXPECT_EQ(m.body, "hello world, and more");
  ASSERT_EQ(m.trailers.size(), 1u);
  EXPECT_EQ(m.trailers[0], (std::pair<std::string, std::string>{"x-checksum", "17"}));
  EXPECT_EQ(m.Header("transfer-encoding"), "chunked");
  EXPECT_EQ(in, "GET /next HTTP/1.1\r\n") << "the next message's bytes stay";
  EXPECT_EQ(reader.Read(in), Result::kNeedMore);
  EXPECT_FALSE(reader.Idle());
}

TEST(SupportHttpFraming, BytesInAnyPiecesReadAsTheWholeDoes) {
  const std::string stream =
      HttpRequestText("POST", "/a", {"Content-Type: application/json"}, R"({"k":"v"})") +
      HttpRequestText("GET", "/b") +
      "PUT /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;e=1\r\nabc\r\n1\r\nd\r\n0\r\n\r\n" +
      "\r\nDELETE /d HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n";
  Result last;
  const std::vector<HttpMessage> whole = ReadAll(HttpKind::kRequest, stream, &last);
  ASSERT_EQ(whole.size(), 4u);
  EXPECT_EQ(last, Result::kNeedMore);
  EXPECT_EQ(whole[0].body, R"({"k":"v"})");
  EXPECT_EQ(whole[2].body, "abcd");
  EXPECT_EQ(whole[3].method, "DELETE") << "an empty line before a request is skipped";

  std::mt19937 random(43);
  for (int round = 0; round < 200; ++round) {
    HttpReader reader(HttpKind::kRequest);
    std::string in;
    std::vector<HttpMessage> got;
    size_t at = 0;
    while (at < stream.size()) {
      // Pieces of 1 to 16 bytes, one byte at a time in the first round.
      const size_t piece = round == 0 ? 1 : 1 + random() % 16;
      in.append(stream, at, piece);
      at += piece;
      Result r;
      while ((r = reader.Read(in)) == Result::kMessage) got.push_back(reader.Take());
      ASSERT_EQ(r, Result::kNeedMore) << reader.reason();
    }
    ASSERT_EQ(got.size(), whole.size()) << "round " << round;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].head, whole[i].head);
      EXPECT_EQ(got[i].headers, whole[i].headers);
      EXPECT_EQ(got[i].body, whole[i].body);
    }
  }
}

TEST(SupportHttpFraming, AContentLengthBodyArrivesInPieces) {
  HttpReader reader(HttpKind::kRequest);
  std::string in = "POST /hook HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n";
  EXPECT_TRUE(reader.Idle());
  EXPECT_EQ(reader.Read(in), Result::kNeedMore);
  EXPECT_TRUE(reader.HeadRead()) << "the moment to answer 100 Continue";
  EXPECT_EQ(reader.message().Header("expect"), "100-continue");
  EXPECT_TRUE(in.empty()) << "the head is taken";
  in += "0123";
  EXPECT_EQ(reader.Read(in), Result::kNeedMore);
  EXPECT_TRUE(in.empty());
  in += "456";
  EXPECT_EQ(reader.Read(in), Result::kNeedMore);
  in += "789GET";
  ASSERT_EQ(reader.Read(in), Result::kMessage);
  EXPECT_EQ(reader.message().body, "0123456789");
  EXPECT_EQ(in, "GET");
  // The stream ending inside a body is a truncation, not a message.
  HttpReader cut(HttpKind::kResponse);
  std::string partial = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab";
  EXPECT_EQ(cut.Read(partial), Result::kNeedMore);
  EXPECT_EQ(cut.End(), Result::kError);
  EXPECT_EQ(cut.error(), HttpFramingError::kTruncated);
  EXPECT_TRUE(cut.HeadRead()) << "its head stays readable";
  EXPECT_EQ(cut.message().status, 200);
}

TEST(SupportHttpFraming, AnAnswerWithoutLengthRunsToTheEndOfTheStream) {
  HttpReader reader(HttpKind::kResponse);
  std::string in = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nfirst ";
  EXPECT_EQ(reader.Read(in), Result::kNeedMore);
  in += "and last";
  EXPECT_EQ(reader.Read(in), Result::kNeedMore);
  ASSERT_EQ(reader.End(), Result::kMessage);
  EXPECT_EQ(reader.message().body, "first and last");
  EXPECT_TRUE(reader.message().ClosesConnection());
  // A request without a length has no body; the end between messages is no message.
  HttpReader requests(HttpKind::kRequest);
  std::string get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(requests.Read(get), Result::kMessage);
  EXPECT_EQ(requests.message().body, "");
  EXPECT_TRUE(requests.Idle());
  EXPECT_EQ(requests.End(), Result::kError);
  EXPECT_EQ(requests.error(), HttpFramingError::kTruncated);
  // A body over the limit is refused before the end comes.
  HttpReader bounded(HttpKind::kResponse, HttpLimits{1024, 8});
  std::string big = "HTTP/1.1 200 OK\r\n\r\n0123456789";
  EXPECT_EQ(bounded.Read(big), Result::kError);
  EXPECT_EQ(bounded.error(), HttpFramingError::kBodyTooLarge);
}

TEST(SupportHttpFraming, AnswersWithoutBodiesAndInterimAnswers) {
  Result last;
  const auto answers = ReadAll(HttpKind::kResponse,
                               "HTTP/1.1 100 Continue\r\n\r\n"
                               "HTTP/1.1 204 No Content\r\nContent-Length: 99\r\n\r\n"
                               "HTTP/1.1 304 Not Modified\r\n\r\n"
                               "HTTP/1.0 200\r\nContent-Length: 2\r\n\r\nok",
                               &last);
  ASSERT_EQ(answers.size(), 4u);
  EXPECT_EQ(last, Result::kNeedMore);
  EXPECT_EQ(answers[0].status, 100);
  EXPECT_EQ(answers[0].reason, "Continue");
  EXPECT_EQ(answers[1].status, 204);
  EXPECT_EQ(answers[1].body, "");
  EXPECT_EQ(answers[3].reason, "") << "a status line without a reason";
  EXPECT_EQ(answers[3].body, "ok");
  EXPECT_TRUE(answers[3].ClosesConnection()) << "HTTP/1.0 without keep-alive";
  // The answer to HEAD has no body whatever its Content-Length; an interim answer before it
  // leaves that so.
  HttpReader reader(HttpKind::kResponse);
  reader.AnswerToHead();
  std::string in =
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext";
  ASSERT_EQ(reader.Read(in), Result::kMessage);
  EXPECT_EQ(reader.Take().status, 100);
  ASSERT_EQ(reader.Read(in), Result::kMessage);
  EXPECT_EQ(reader.Take().body, "");
  ASSERT_EQ(reader.Read(in), Result::kMessage);
  EXPECT_EQ(reader.Take().body, "next") << "only the one answer";
}

TEST(SupportHttpFraming, AMalformedMessageIsRefusedWithAReason) {
  using E = HttpFramingError;
  const std::string host = "Host: x\r\n";
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\n" + host + "\r\n"), E::kNone);
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nNoColon\r\n\r\n"), E::kMalformed);
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nHost : x\r\n\r\n"), E::kMalformed);  // a space before the colon
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\n" + host + " folded\r\n\r\n"), E::kMalformed);
  {
    HttpReader reader(HttpKind::kRequest);
    std::string folded = "GET / HTTP/1.1\r\n" + host + " folded: on\r\n\r\n";
    ASSERT_EQ(reader.Read(folded), Result::kError);
    EXPECT_EQ(reader.reason(), "a folded header line");
  }
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nX: a\nb\r\n\r\n"), E::kMalformed);  // a bare LF
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n"), E::kMalformed);  // a bare CR
  const char kNul[] = "GET / HTTP/1.1\r\nX: a\0b\r\n\r\n";
  EXPECT_EQ(ErrorOf(std::string(kNul, sizeof kNul - 1)), E::kMalformed);
  EXPECT_EQ(ErrorOf("GET /\r\n\r\n"), E::kMalformed);
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1 extra\r\n\r\n"), E::kMalformed);
  EXPECT_EQ(ErrorOf("GET / HTTQ/1.1\r\n\r\n"), E::kMalformed);
  EXPECT_EQ(ErrorOf("G(T / HTTP/1.1\r\n\r\n"), E::kMalformed);
  EXPECT_EQ(ErrorOf("\x01\x02\r\n\r\n"), E::kMalformed);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nContent-Length: 0x10\r\n\r\n"), E::kMalformed);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"), E::kMalformed);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\nx"), E::kMalformed);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy"), E::kMalformed);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nxy"), E::kNone);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            E::kMalformed);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"), E::kUnsupported);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), E::kUnsupported);
  const std::string chunked = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  EXPECT_EQ(ErrorOf(chunked + "zz\r\n"), E::kMalformed);
  EXPECT_EQ(ErrorOf(chunked + ";ext\r\n"), E::kMalformed);       // no size
  EXPECT_EQ(ErrorOf(chunked + "3 x\r\n"), E::kMalformed);        // not an extension
  EXPECT_EQ(ErrorOf(chunked + "3\r\nabcd\r\n"), E::kMalformed);  // longer than its size
  EXPECT_EQ(ErrorOf(chunked + "0\r\nno colon\r\n\r\n"), E::kMalformed);
  EXPECT_EQ(ErrorOf(chunked + "fffffffffffffffffffff\r\n"), E::kBodyTooLarge) << "no overflow";
  EXPECT_EQ(ErrorOf(chunked + std::string(5000, '0')), E::kMalformed) << "an endless size line";
  // Answers.
  EXPECT_EQ(ErrorOf("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", HttpKind::kResponse), E::kNone);
  EXPECT_EQ(ErrorOf("HTTP/1.1 2000 OK\r\n\r\n", HttpKind::kResponse), E::kMalformed);
  EXPECT_EQ(ErrorOf("HTTP/1.1 20 OK\r\n\r\n", HttpKind::kResponse), E::kMalformed);
  EXPECT_EQ(ErrorOf("HTTP/1.1 200OK\r\n\r\n", HttpKind::kResponse), E::kMalformed);
  EXPECT_EQ(ErrorOf("ICY 200 OK\r\n\r\n", HttpKind::kResponse), E::kMalformed);
  // Limits: the head (endless, or whole but too long) and the body.
  const HttpLimits small{64, 16};
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nX: " + std::string(100, 'a'), HttpKind::kRequest, small),
            E::kHeadTooLarge);
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nX: " + std::string(50, 'a') + "\r\n\r\n", HttpKind::kRequest, small),
            E::kHeadTooLarge);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nContent-Length: 17\r\n\r\n", HttpKind::kRequest, small),
            E::kBodyTooLarge);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n"), E::kMalformed);
  EXPECT_EQ(ErrorOf(chunked + "9\r\n123456789\r\n9\r\n", HttpKind::kRequest, HttpLimits{1024, 16}),
            E::kBodyTooLarge);
  EXPECT_EQ(ErrorOf(chunked + "0\r\nX: " + std::string(100, 'a'), HttpKind::kRequest, small),
            E::kHeadTooLarge);
}

TEST(SupportHttpFraming, WhatTheWritersWriteReadsBack) {
  auto requests = ReadAll(HttpKind::kRequest,
                          HttpRequestText("POST", "/v2/x?y=%20", {"Content-Type: application/json"}, "{}") +
                              HttpRequestText("GET", "/", {"host: example.com:8080", "Connection: close"}) +
                              HttpRequestText("PATCH", "/empty"));
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].target, "/v2/x?y=%20");
  EXPECT_EQ(requests[0].Header("host"), "127.0.0.1");
  EXPECT_EQ(requests[0].Header("content-type"), "application/json");
  EXPECT_EQ(requests[0].Header("content-length"), "2");
  EXPECT_EQ(requests[0].body, "{}");
  EXPECT_EQ(requests[1].Count("host"), 1u) << "the Host given stands";
  EXPECT_EQ(requests[1].Header("host"), "example.com:8080");
  EXPECT_EQ(requests[1].Count("content-length"), 0u);
  EXPECT_TRUE(requests[1].ClosesConnection());
  EXPECT_EQ(requests[2].Header("content-length"), "0") << "PATCH sends a body, even an empty one";

  auto answers =
      ReadAll(HttpKind::kResponse, HttpResponseText(201, {"Location: /x"}, "made") + HttpResponseText(204) +
                                       HttpResponseText(418, {"Transfer-Encoding: chunked"}) +
                                       HttpChunkedBody({"abc", "", std::string(300, 'z')}));
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_EQ(answers[0].status, 201);
  EXPECT_EQ(answers[0].reason, "Created");
  EXPECT_EQ(answers[0].Header("location"), "/x");
  EXPECT_EQ(answers[0].body, "made");
  EXPECT_EQ(answers[1].Count("content-length"), 0u) << "204 says no length";
  EXPECT_EQ(answers[2].reason, "Status");
  EXPECT_EQ(answers[2].body, "abc" + std::string(300, 'z'));
  EXPECT_FALSE(answers[0].ClosesConnection());
}

TEST(SupportHttpFraming, AMessageReadAfterAnotherHasOnlyItsOwnHeaders) {
  // Read with message() rather than Take(), as the benches do: the reader reuses its strings.
  HttpReader reader(HttpKind::kRequest);
  std::string in =
      HttpRequestText("POST", "/1", {"X-A: " + std::string(40, 'a'), "X-B: b"}, "one") +
      HttpRequestText("GET", "/2") +
      HttpRequestText("PUT", "/3", {"X-C: c", "X-D: d", "X-E: " + std::string(30, 'e')}, "three");
  ASSERT_EQ(reader.Read(in), Result::kMessage);
  EXPECT_EQ(reader.message().headers.size(), 4u);  // Host, X-A, X-B, Content-Length
  EXPECT_EQ(reader.message().Header("x-a"), std::string(40, 'a'));
  ASSERT_EQ(reader.Read(in), Result::kMessage);
  EXPECT_EQ(reader.message().target, "/2");
  ASSERT_EQ(reader.message().headers.size(), 1u);
  EXPECT_EQ(reader.message().headers[0], (std::pair<std::string, std::string>{"host", "127.0.0.1"}));
  EXPECT_EQ(reader.message().body, "");
  ASSERT_EQ(reader.Read(in), Result::kMessage);
  EXPECT_EQ(reader.message().Count("x-a"), 0u);
  EXPECT_EQ(reader.message().Header("x-e"), std::string(30, 'e'));
  EXPECT_EQ(reader.message().headers.size(), 5u);
  EXPECT_EQ(reader.message().body, "three");
  EXPECT_TRUE(in.empty());
}

TEST(SupportHttpFraming, HeaderLinesSplitAndConnectionOptions) {
  std::string name, value;
  ASSERT_TRUE(SplitHttpHeaderLine("Retry-After: \t 7 \r\n", name, value));
  EXPECT_EQ(name, "retry-after");
  EXPECT_EQ(value, "7");
  ASSERT_TRUE(SplitHttpHeaderLine("X-Empty:", name, value));
  EXPECT_EQ(value, "");
  EXPECT_FALSE(SplitHttpHeaderLine("HTTP/1.1 200 OK\r\n", name, value));
  EXPECT_FALSE(SplitHttpHeaderLine(": no name", name, value));
  EXPECT_FALSE(SplitHttpHeaderLine("\r\n", name, value));

  HttpMessage m;
  std::string reason;
  ASSERT_TRUE(ParseHttpHead("GET / HTTP/1.0\r\nConnection: Keep-Alive", HttpKind::kRequest, m, reason))
      << reason;
  EXPECT_FALSE(m.ClosesConnection());
  m = HttpMessage();
  ASSERT_TRUE(ParseHttpHead("GET / HTTP/1.1\r\nConnection: te, CLOSE", HttpKind::kRequest, m, reason))
      << reason;
  EXPECT_TRUE(m.ClosesConnection());
  m = HttpMessage();
  ASSERT_TRUE(ParseHttpHead("GET / HTTP/1.1\r\nConnection: closed", HttpKind::kRequest, m, reason)) << reason;
  EXPECT_FALSE(m.ClosesConnection()) << "an option is a whole token";
}

}  // namespace
}  // namespace rendezvous::testing
