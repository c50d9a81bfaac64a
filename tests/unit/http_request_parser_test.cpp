// HTTP/1.1 request framing (RFC 9112): where requests end, and what is refused.
#include <gtest/gtest.h>

#include "http/request_parser.hpp"

namespace rendezvous::core {
namespace {

using Outcome = RequestParser::Outcome;

RequestParser::Limits SmallLimits() {
  RequestParser::Limits l;
  l.max_line_bytes = 256;
  l.max_head_bytes = 1024;
  l.max_fields = 8;
  l.max_body_bytes = 100;
  return l;
}

// Feeds the text in one piece; returns the outcome of the first Parse.
Outcome ParseAll(RequestParser& p, std::string& in) { return p.Parse(in); }

int ErrorOf(const std::string& text) {
  RequestParser p(SmallLimits());
  std::string in = text;
  Outcome o = p.Parse(in);
  return o == Outcome::kError ? p.error_status() : 0;
}

TEST(RequestParser, SimpleGet) {
  RequestParser p(SmallLimits());
  std::string in = "GET /a?b=1 HTTP/1.1\r\nHost: x\r\nX-Thing:  spaced value \t\r\n\r\n";
  ASSERT_EQ(ParseAll(p, in), Outcome::kComplete);
  EXPECT_TRUE(in.empty());
  ParsedRequest r = p.Take();
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.target, "/a?b=1");
  EXPECT_EQ(r.minor_version, 1);
  EXPECT_TRUE(r.keep_alive);
  ASSERT_EQ(r.headers.size(), 2u);
  EXPECT_EQ(r.headers[1].first, "x-thing");
  EXPECT_EQ(r.headers[1].second, "spaced value");
  EXPECT_TRUE(p.idle());
}

TEST(RequestParser, PipelinedRequestsComeOneByOne) {
  RequestParser p(SmallLimits());
  std::string in =
      "GET /1 HTTP/1.1\r\nHost: x\r\n\r\n"
      "POST /2 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
      "GET /3 HTTP/1.1\r\nHost: x\r\n\r\n";
  std::vector<std::string> targets;
  std::string body;
  while (p.Parse(in) == Outcome::kComplete) {
    ParsedRequest r = p.Take();
    targets.push_back(r.target);
    if (r.target == "/2") body = r.body;
  }
  EXPECT_EQ(targets, (std::vector<std::string>{"/1", "/2", "/3"}));
  EXPECT_EQ(body, "hello");
  EXPECT_TRUE(in.empty());
}

TEST(RequestParser, ByteByByteGivesTheSameRequest) {
  const std::string text =
      "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: t\r\n\r\n";
  RequestParser p(SmallLimits());
  std::string in;
  int completes = 0;
  ParsedRequest r;
  for (char c : text) {
    in.push_back(c);
    Outcome o = p.Parse(in);
    ASSERT_NE(o, Outcome::kError) << p.error_message();
    if (o == Outcome::kComplete) {
      ++completes;
      r = p.Take();
    }
  }
  EXPECT_EQ(completes, 1);
  EXPECT_EQ(r.body, "abcde");
  EXPECT_TRUE(in.empty());
}

TEST(RequestParser, BodyWaitsForAllItsBytes) {
  RequestParser p(SmallLimits());
  std::string in = "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n";
  EXPECT_EQ(p.Parse(in), Outcome::kNeedMore);
  EXPECT_TRUE(p.in_body());
  EXPECT_TRUE(p.expects_continue());
  EXPECT_EQ(p.declared_body_bytes(), 10u);
  in += "12345";
  EXPECT_EQ(p.Parse(in), Outcome::kNeedMore);
  EXPECT_FALSE(p.expects_continue());
  in += "67890GET";
  ASSERT_EQ(p.Parse(in), Outcome::kComplete);
  EXPECT_EQ(p.Take().body, "1234567890");
  EXPECT_EQ(in, "GET");
  EXPECT_EQ(p.Parse(in), Outcome::kNeedMore);
  EXPECT_FALSE(p.idle());
}

TEST(RequestParser, ConnectionSemantics) {
  auto keep = [](const std::string& text) {
    RequestParser p(SmallLimits());
    std::string in = text;
    EXPECT_EQ(p.Parse(in), Outcome::kComplete) << text;
    return p.Take().keep_alive;
  };
  EXPECT_TRUE(keep("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_FALSE(keep("GET / HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n"));
  EXPECT_FALSE(keep("GET / HTTP/1.0\r\n\r\n"));
  EXPECT_TRUE(keep("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  EXPECT_FALSE(keep("GET / HTTP/1.1\r\nHost: x\r\nConnection: te, close\r\n\r\n"));
}

TEST(RequestParser, EmptyLinesBeforeARequestAreSkipped) {
  RequestParser p(SmallLimits());
  std::string in = "\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(p.Parse(in), Outcome::kComplete);
  EXPECT_EQ(ErrorOf(std::string(40, '\r') + "\n"), 400);
}

TEST(RequestParser, GarbageIsRefusedAsSoonAsItsLineEnds) {
  RequestParser p(SmallLimits());
  std::string in = "HELLO THERE\r\n";  // no blank line yet: refused without waiting for one
  EXPECT_EQ(p.Parse(in), Outcome::kError);
  EXPECT_EQ(p.error_status(), 400);
  EXPECT_EQ(ErrorOf("\x01\x02\x03\r\n"), 400);
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\n"), 400);  // bare LF
  EXPECT_EQ(ErrorOf("GET  / HTTP/1.1\r\n"), 400);
  EXPECT_EQ(ErrorOf("GET /a b HTTP/1.1\r\n"), 400);
  EXPECT_EQ(ErrorOf("G(T / HTTP/1.1\r\n"), 400);
  EXPECT_EQ(ErrorOf("GET / HTTP/2.0\r\n"), 505);
  EXPECT_EQ(ErrorOf("GET / HTTX/1.1\r\n"), 400);
}

TEST(RequestParser, AmbiguousFramingIsRefused) {
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"), 400);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"), 400);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 6\r\n\r\n"), 400);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n"), 400);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0x10\r\n\r\n"), 400);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), 501);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"), 400);
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nHost : x\r\n\r\n"), 400);           // space before the colon
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n"), 400);  // obs-fold
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nNoColon\r\n\r\n"), 400);
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\n\r\n"), 400);                        // no Host
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), 400);
  const char kNul[] = "GET / HTTP/1.1\r\nHost: x\r\nX: a\0b\r\n\r\n";
  EXPECT_EQ(ErrorOf(std::string(kNul, sizeof kNul - 1)), 400);
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nHost: x\r\nExpect: magic\r\n\r\n"), 417);
  // Identical repeated lengths are one length.
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab"), 0);
}

TEST(RequestParser, LimitsAreEnforcedBeforeReadingMore) {
  EXPECT_EQ(ErrorOf("GET /" + std::string(300, 'a')), 414);  // no line end needed
  std::string many = "GET / HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 9; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(ErrorOf(many + "\r\n"), 431);
  EXPECT_EQ(ErrorOf("GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(1100, 'v')), 431);
  // A declared body over the limit is refused from the head alone.
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n"), 413);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999999\r\n\r\n"), 413);
  // A chunked body is refused as soon as its chunks add up past the limit.
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n50\r\n" + std::string(80, 'a') +
                    "\r\n20\r\n"),
            413);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n"), 400);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n"), 400);
  EXPECT_EQ(ErrorOf("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), 400);
}

// The answer does not depend on how the bytes arrive (cases the fuzz target found).
int ErrorByteByByte(const std::string& text) {
  RequestParser p(SmallLimits());
  std::string in;
  for (char c : text) {
    in += c;
    for (Outcome o = p.Parse(in); o != Outcome::kNeedMore; o = p.Parse(in)) {
      if (o == Outcome::kError) return p.error_status();
      p.Take();
    }
  }
  return 0;
}

TEST(RequestParser, TheSameBytesFrameTheSameWayInPieces) {
  // A request line of exactly the limit: its CR arrives while the line is at the limit.
  const std::string line = "GET /" + std::string(256 - 14, 'a') + " HTTP/1.1";
  ASSERT_EQ(line.size(), 256u);
  const std::string request = line + "\r\nHost: x\r\n\r\n";
  EXPECT_EQ(ErrorOf(request), 0);
  EXPECT_EQ(ErrorByteByByte(request), 0);
  // Empty lines before a request are counted across reads too.
  std::string crlfs;
  for (int i = 0; i < 12; ++i) crlfs += "\r\n";
  EXPECT_EQ(ErrorOf(crlfs + "GET / HTTP/1.1\r\n"), 400);
  EXPECT_EQ(ErrorByteByByte(crlfs + "GET / HTTP/1.1\r\n"), 400);
  // A bare LF inside the limit is refused even when the line then runs over it.
  const std::string bare = "GET /a\nb" + std::string(300, 'x');
  EXPECT_EQ(ErrorOf(bare), 400);
  EXPECT_EQ(ErrorByteByByte(bare), 400);
  EXPECT_EQ(ErrorOf(std::string(300, 'x') + "\n"), 414);
  EXPECT_EQ(ErrorByteByByte(std::string(300, 'x') + "\n"), 414);
}

TEST(RequestParser, ErrorsAreFinal) {
  RequestParser p(SmallLimits());
  std::string in = "BAD\r\n";
  EXPECT_EQ(p.Parse(in), Outcome::kError);
  in = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  EXPECT_EQ(p.Parse(in), Outcome::kError);
}

}  // namespace
}  // namespace rendezvous::core
