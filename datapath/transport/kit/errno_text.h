#pragma once
// errno as text, for the error messages of every plugin.

#include <string>

namespace lutra::transport::kit {

std::string errnoText(int error);

} // namespace lutra::transport::kit
