// What a learner's exercise stub throws until it is written. The checks in tests/exercises
// report it as "not implemented yet" together with the hint.
#pragma once

#include <stdexcept>
#include <string>

namespace attn {

class NotImplemented : public std::logic_error {
 public:
  explicit NotImplemented(const std::string& hint) : std::logic_error("not implemented yet — " + hint) {}
};

}  // namespace attn
