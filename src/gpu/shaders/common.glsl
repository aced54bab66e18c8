// Shared by every shader: the linear workgroup index of a 2-D dispatch
// (one dimension stops at 65535 groups: vocabularies are larger).
#extension GL_GOOGLE_include_directive : require

uint group_index()
{
    return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
}
