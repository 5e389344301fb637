#pragma once
// One profile's document as GetProfile returns it, for the profile editor. Kept out of
// core/types.h: only the net layer and the editor's controller use it.

#include <QString>

namespace lutra::console {

struct ProfileText {
    QString name;
    QString yaml;   // exactly as stored or as in the file
    QString source; // "stored", or the file's path on the node (edit that file instead)
};

} // namespace lutra::console
