# Makes PYTHON_DIR an importable copy of the package (run at build time by python/CMakeLists.txt):
#   - PYTHON_DIR/hipinductor/<rel>.py -> SOURCE_DIR/<rel>.py symlinks (copies where symlinks fail), for every .py;
#   - symlinks whose source file is gone are removed (a renamed module must not linger in the build tree);
#   - PYTHON_DIR/hipinductor-VERSION.dist-info/{METADATA,entry_points.txt}, rewritten only when they change.
# Usage: cmake -DSOURCE_DIR=… -DPYTHON_DIR=… -DVERSION=… -P link_package.cmake
foreach(var SOURCE_DIR PYTHON_DIR VERSION)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "link_package.cmake: -D${var}=… is required")
  endif()
endforeach()

set(package_dir ${PYTHON_DIR}/hipinductor)
file(MAKE_DIRECTORY ${package_dir})

file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/*.py)
foreach(rel IN LISTS sources)
  set(link ${package_dir}/${rel})
  if(IS_SYMLINK ${link})
    file(READ_SYMLINK ${link} current)
    if(current STREQUAL "${SOURCE_DIR}/${rel}")
      continue()
    endif()
  endif()
  get_filename_component(parent ${link} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  file(REMOVE ${link})
  file(CREATE_LINK ${SOURCE_DIR}/${rel} ${link} SYMBOLIC COPY_ON_ERROR)
endforeach()

file(GLOB_RECURSE links LIST_DIRECTORIES false ${package_dir}/*.py)
foreach(link IN LISTS links)
  if(IS_SYMLINK ${link} AND NOT EXISTS ${link})
    file(REMOVE ${link})
  endif()
endforeach()

# Where a previous version's dist-info would shadow this one.
file(GLOB old_dist_infos LIST_DIRECTORIES true ${PYTHON_DIR}/hipinductor-*.dist-info)
foreach(old IN LISTS old_dist_infos)
  if(NOT old STREQUAL "${PYTHON_DIR}/hipinductor-${VERSION}.dist-info")
    file(REMOVE_RECURSE ${old})
  endif()
endforeach()

set(dist_info ${PYTHON_DIR}/hipinductor-${VERSION}.dist-info)
string(CONCAT metadata "Metadata-Version: 2.1\nName: hipinductor\nVersion: ${VERSION}\n"
                       "Summary: HIP compiler backend for torch.compile (build tree)\n")
file(CONFIGURE OUTPUT ${dist_info}/METADATA CONTENT "${metadata}")
file(CONFIGURE OUTPUT ${dist_info}/entry_points.txt
     CONTENT "[torch_dynamo_backends]\nhipinductor = hipinductor.backend:hipinductor_backend\n")
