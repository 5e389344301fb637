#include "transport/kit/errno_text.h"

#include <cstring>

namespace lutra::transport::kit {

std::string errnoText(int error)
{
    char buffer[128];
    // GNU strerror_r returns the text, which may not be in buffer.
    return strerror_r(error, buffer, sizeof(buffer));
}

} // namespace lutra::transport::kit
